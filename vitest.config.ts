import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    // Most of the suite's time is spent waiting: on the programs a test starts (stations,
    // servers), their timers and the disk. Vitest's default of one worker fewer than the CPUs
    // ran the files one at a time on a two-core machine; two at a time hide one's waits behind
    // the other's work.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/tempRoot.ts'],
  },
});

export default config;
