import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});

export default config;
