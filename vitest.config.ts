import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/tempRoot.ts'],
  },
});

export default config;
