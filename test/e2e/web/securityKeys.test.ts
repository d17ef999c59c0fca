// Security keys (WebAuthn) in a real browser: Chromium with a virtual authenticator (DevTools
// protocol), the page's own script under the pages' real CSP, on http://localhost (a secure
// context, and the relying party LOCAL_DOMAIN names). Register a key once the authenticator app
// is on, log in with it instead of a code, remove it. The pages pass axe-core.
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { seriousAxeViolations } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { buildApi, type Api } from '../../../services/api/app.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { bindServer } from '../../support/listening.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { webauthnCredentials } from '../../../services/core/model/webauthnCredentials.ts';

function totpCode(secret: string, steps = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret.replace(/\s+/g, '')), digits: 6, period: 30 });
  return totp.generate({ timestamp: Date.now() + steps * 30_000 });
}

// Several browser flows per test: generous on a loaded machine.
const BROWSER_TEST_TIMEOUT = 240_000;

describeWithBrowser('securityKeys.test.ts')('security keys (WebAuthn) in Chromium with a virtual authenticator', () => {
  let core: Core;
  let api: Api;
  let base: string;
  let browser: Browser;

  async function newPage(bypassCSP: boolean): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 }, bypassCSP });
    return { context, page: await context.newPage() };
  }

  async function submit(page: Page, button: string): Promise<void> {
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: button }).click()]);
  }

  async function passwordStep(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${base}/auth/sign_in`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await submit(page, 'Log in');
  }

  beforeAll(async () => {
    const at = await bindServer();
    base = `http://localhost:${at.port}`;
    ({ core } = await createTestCore(testConfig({ LOG_LEVEL: 'error', LOCAL_DOMAIN: `localhost:${at.port}` })));
    api = await buildApi(core);
    await at.serve(api);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    if (core) await closeTestCore(core);
  });

  it(
    'adds a key once the authenticator app is on, logs in with it instead of a code, removes it',
    async () => {
      const kim = await createTestUser(core, { username: 'kim', email: 'kim@example.test' });
      // The pages' real CSP (no bypass): the page's own script must run under it.
      const { context, page } = await newPage(false);
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'usb',
          hasResidentKey: false,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await passwordStep(page, 'kim@example.test', kim.password);

      // Without the authenticator app, the key page sends to the two-factor page.
      await page.goto(`${base}/settings/security_keys`);
      expect(new URL(page.url()).pathname).toBe('/settings/two_factor_authentication_methods');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Set up' }).click()]);
      await page.getByLabel('Current password').fill(kim.password);
      await submit(page, 'Continue');
      const secret = (await page.locator('#otp-secret').textContent())!;
      await page.getByLabel('Two-factor code').fill(totpCode(secret));
      await submit(page, 'Enable');

      await page.goto(`${base}/settings/two_factor_authentication_methods`);
      await expect(page.locator('main').textContent()).resolves.toContain('Security keys: 0');
      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Manage security keys' }).click(),
      ]);
      const res = await page.goto(`${base}/settings/security_keys`);
      expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.getByLabel('Nickname').fill('Blue key');
      await Promise.all([
        page.waitForURL(`${base}/settings/security_keys`, { waitUntil: 'load' }),
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/settings/security_keys')),
        page.getByRole('button', { name: 'Add security key' }).click(),
      ]);
      await expect(page.getByRole('status').textContent()).resolves.toBe('Your security key was successfully added.');
      await expect(page.locator('#security-key-list').textContent()).resolves.toContain('Blue key');
      const [stored] = await collection(core.db, webauthnCredentials).find({ userId: kim.user._id }).toArray();
      expect(stored).toMatchObject({ nickname: 'Blue key' });

      // Log out, then in: password, then the key instead of a code.
      await submit(page, 'Log out (@kim)');
      await passwordStep(page, 'kim@example.test', kim.password);
      await expect(page.getByRole('button', { name: 'Use security key' }).count()).resolves.toBe(1);
      await Promise.all([
        page.waitForURL(`${base}/auth/edit`, { waitUntil: 'load' }),
        page.getByRole('button', { name: 'Use security key' }).click(),
      ]);
      await expect(page.locator('main').textContent()).resolves.toContain('kim@example.test');
      const used = await collection(core.db, webauthnCredentials).findOne({ _id: stored._id });
      expect(used!.signCount).toBeGreaterThan(stored.signCount);

      // The pages with a key pass axe (a context that lets axe's script in).
      const checked = await newPage(true);
      await passwordStep(checked.page, 'kim@example.test', kim.password);
      expect(await seriousAxeViolations(checked.page)).toEqual([]);
      await checked.page.getByLabel('Two-factor code').fill(totpCode(secret, 1));
      await submit(checked.page, 'Log in');
      await checked.page.goto(`${base}/settings/security_keys`);
      expect(await seriousAxeViolations(checked.page)).toEqual([]);
      await checked.context.close();

      // Removed: the next log-in asks for a code only.
      await page.goto(`${base}/settings/security_keys`);
      await submit(page, 'Delete Blue key');
      await expect(page.getByRole('status').textContent()).resolves.toBe('Your security key was successfully deleted.');
      await expect(collection(core.db, webauthnCredentials).countDocuments({ userId: kim.user._id })).resolves.toBe(0);
      await submit(page, 'Log out (@kim)');
      await passwordStep(page, 'kim@example.test', kim.password);
      await expect(page.getByLabel('Two-factor code').count()).resolves.toBe(1);
      await expect(page.getByRole('button', { name: 'Use security key' }).count()).resolves.toBe(0);
      await context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );
});
