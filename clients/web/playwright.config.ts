import { defineConfig } from '@playwright/test';

// Every test starts its own `totem serve` (tests/support.ts), which serves dist/: build first.
// Chromium is the system's (never downloaded): CHROMIUM overrides its path.
export default defineConfig({
  testDir: 'tests',
  testMatch: '*.spec.ts',
  // Each test runs a server and bots: one at a time on a small CI machine.
  workers: 1,
  fullyParallel: false,
  timeout: 300_000,
  expect: { timeout: 120_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    actionTimeout: 60_000,
    navigationTimeout: 60_000,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
