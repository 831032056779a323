import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    // Most of the suite's time is spent waiting: on the programs a test starts (stations,
    // servers), their timers and the disk. Vitest's default of one worker fewer than the CPUs
    // ran the files one at a time on a two-core machine; one more worker than the CPUs hides
    // waits behind other files' work (on two cores: 528 s with three workers against 628 s with
    // two, though the files' own times add up to 1,352 s against 1,082).
    maxWorkers: availableParallelism() + 1,
    globalSetup: ['test/tempRoot.ts'],
  },
});

export default config;
