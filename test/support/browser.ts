// Debian's Chromium driven by playwright-core, for tests that need a real browser (OAuth pages,
// CORS as a browser enforces it). Without Chromium (CHROMIUM_PATH, default /usr/bin/chromium) a
// test file skips locally, but fails under CI, which installs it: a browser test must never vanish.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describeWithTool } from './requiredTool.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `describe`, or `describe.skip` with a warning when there is no Chromium outside CI. */
export function describeWithBrowser(file: string): jest.Describe {
  return describeWithTool(
    existsSync(CHROMIUM),
    file,
    `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
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
  });
}
