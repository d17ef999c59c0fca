// Driving the server-rendered pages in Chromium: a browser context signed in through the log-in
// form (or a visitor's), and a form submitted by its button, waiting for the next page.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestUser } from './fixtures.ts';

/** A new context (CSP bypassed, for axe-core) and page; signed in as `user` unless null. */
export async function signedInContext(
  browser: Browser,
  baseUrl: string,
  user: TestUser | null,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  if (user) {
    await page.goto(`${baseUrl}/auth/sign_in`);
    await page.getByLabel('E-mail address').fill(user.user.email);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Log in' }).click()]);
  }
  return { context, page };
}

/** Clicks the button and waits for the page the form leads to. */
export async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: button }).click()]);
}
