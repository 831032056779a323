import { defineConfig, devices } from '@playwright/test';

// Each test starts its own station process on its own data dir (see fixtures.ts), so tests
// do not share state. Three workers on a two-core machine: a test waits on its station and
// its page as much as it works, so a third fills the gaps. The suite alone took 307 and 315 s
// with three workers against 338 and 360 s with two on this kind of box (four: 304 s, each
// test then slower). ESLint beside it gained nothing: `npm test` runs the lint first.
export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  fullyParallel: true,
  workers: 3,
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
