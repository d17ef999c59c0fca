// Debian's Chromium driven by playwright-core, for tests that need a real browser (OAuth pages,
// CORS as a browser enforces it). Without Chromium (CHROMIUM_PATH, default /usr/bin/chromium) a
// test file skips locally, but fails under CI, which installs it: a browser test must never vanish.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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

/**
 * A new context and page as a visitor's (900×900, light or dark). bypassCSP: axe-core is injected
 * as a script, which the pages' CSP (rightly) forbids.
 */
export async function newBrowserPage(
  browser: Browser,
  opts: { dark?: boolean; locale?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 900, height: 900 },
    bypassCSP: true,
    colorScheme: opts.dark ? 'dark' : 'light',
    ...(opts.locale ? { locale: opts.locale } : {}),
  });
  return { context, page: await context.newPage() };
}

/** Clicks the button named `name` (`exact`: the whole name) and waits for the page it loads. */
export async function submitForm(page: Page, name: string, exact = false): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name, exact }).click()]);
}

/** Signs in with the sign-in form of the server at `baseUrl`. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/auth/sign_in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await submitForm(page, 'Log in', true);
}
