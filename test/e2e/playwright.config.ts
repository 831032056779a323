import { defineConfig, devices } from '@playwright/test';

// Each test starts its own station process on its own data dir (see fixtures.ts), so tests
// do not share state; two workers keep the run short without crowding a small CI machine.
export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  fullyParallel: true,
  workers: 2,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: 'list',
  outputDir: '../../test-results/e2e',
  use: {
    ...devices['Desktop Chrome'],
    headless: true,
    viewport: { width: 1024, height: 768 },
    acceptDownloads: true,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-gpu',
      ],
    },
  },
  projects: [{ name: 'chromium' }],
});
