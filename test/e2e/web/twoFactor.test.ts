// Two-factor authentication in a real browser (Chromium through playwright-core): set up an
// authenticator app from the QR page with a code computed here from the secret the page shows,
// then log in through an app's OAuth flow with a TOTP code and with a recovery code (each works
// once), regenerate the codes and turn it off; an administrator's reset through the admin API;
// the log-in throttles per IP and per account over plain HTTP. Every page passes axe-core.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium, newBrowserPage, signIn, submitForm } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer } from '../../support/fixtures.ts';
import { authorizeUrl, Browser as HttpBrowser, hiddenFields, registerApp } from '../accounts/browser.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import { createRole } from '../../../services/core/roles/roles.ts';
import { roles } from '../../../services/core/model/roles.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');
const OOB = 'urn:ietf:wg:oauth:2.0:oob';

/** The code an authenticator app shows `steps` periods from now. */
function totpCode(secret: string, steps = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret.replace(/\s+/g, '')), digits: 6, period: 30 });
  return totp.generate({ timestamp: Date.now() + steps * 30_000 });
}

// Several browser flows per test: generous on a loaded machine.
const BROWSER_TEST_TIMEOUT = 240_000;

describeWithBrowser('twoFactor.test.ts')('two-factor authentication in a real browser (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;

  const newPage = (opts: { dark?: boolean } = {}) => newBrowserPage(browser, opts);
  const submit = (page: Page, button: string) => submitForm(page, button);
  const logIn = (page: Page, email: string, password: string) => signIn(page, server.url, email, password);

  /** An app's authorization: log-in form, then (when asked) the second factor, consent, the code, a token. */
  async function appToken(page: Page, email: string, password: string, secondFactor: string | null) {
    const client = await registerApp(server.url, OOB, 'read write');
    await page.goto(`${server.url}${authorizeUrl(client, { redirectUri: OOB, scope: 'read write' })}`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await submit(page, 'Log in');
    if (secondFactor !== null) {
      await expect(page.locator('h1').textContent()).resolves.toBe('Two-factor authentication');
      await page.getByLabel('Two-factor code').fill(secondFactor);
      await submit(page, 'Log in');
    }
    await Promise.all([
      page.waitForURL('**/oauth/authorize/native?**'),
      page.getByRole('button', { name: 'Authorize' }).click(),
    ]);
    const code = (await page.locator('#authorization-code').textContent())!.trim();
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: OOB,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async function verifyCredentials(token: string): Promise<number> {
    const res = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.body?.cancel();
    return res.status;
  }

  /** Sets up the authenticator app for a signed-in page; returns the secret and the recovery codes. */
  async function enable(
    page: Page,
    password: string,
    check = false,
  ): Promise<{ secret: string; codes: string[]; used: string }> {
    await page.goto(`${server.url}/settings/two_factor_authentication_methods`);
    if (check) await expectAccessible(page, 'two-factor methods (off)');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('link', { name: 'Set up' }).click()]);
    if (check) await expectAccessible(page, 'otp setup');
    await page.getByLabel('Current password').fill(password);
    await submit(page, 'Continue');
    expect(new URL(page.url()).pathname).toBe('/settings/two_factor_authentication/confirmation/new');
    const secret = (await page.locator('#otp-secret').textContent())!;
    expect(secret.replace(/\s+/g, '')).toMatch(/^[A-Z2-7]{32}$/);
    await expect(page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).count()).resolves.toBe(
      1,
    );
    if (check) {
      await expectAccessible(page, 'otp confirmation (QR code)');
      await page.screenshot({ path: join(SCREENSHOTS, 'web-two-factor-qr.png'), fullPage: true });
      // A wrong code is refused and the same secret stays on the page.
      await page.getByLabel('Two-factor code').fill('000000' === totpCode(secret) ? '111111' : '000000');
      await submit(page, 'Enable');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(
        'The entered code was invalid! Are server time and device time correct?',
      );
      await expect(page.locator('#otp-secret').textContent()).resolves.toBe(secret);
    }
    const used = totpCode(secret);
    await page.getByLabel('Two-factor code').fill(used);
    await submit(page, 'Enable');
    await expect(page.getByRole('status').first().textContent()).resolves.toBe(
      'Two-factor authentication successfully enabled.',
    );
    const codes = (await page.locator('ol.recovery-codes code').allTextContents()).map((c) => c.trim());
    if (check) await expectAccessible(page, 'recovery codes');
    return { secret, codes, used };
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core } = await createTestCore(testConfig({ LOG_LEVEL: 'error' })));
    server = await startTestServer(core);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it(
    'set up with a QR code, then an app log-in asks for a code: TOTP and recovery codes each work once',
    async () => {
      const tess = await createTestUser(core, { username: 'tess', email: 'tess@example.test' });
      const { context, page } = await newPage();
      await logIn(page, 'tess@example.test', tess.password);
      const { secret, codes, used } = await enable(page, tess.password, true);
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      for (const c of codes) expect(c).toMatch(/^[0-9a-f]{10}$/);
      const stored = await collection(core.db, users).findOne({ _id: tess.user._id });
      expect(stored).toMatchObject({ otpRequiredForLogin: true });
      // Neither the secret nor the codes are stored as such.
      expect(stored!.otpSecret).not.toContain(secret.replace(/\s+/g, ''));
      expect(stored!.otpBackupCodes).not.toContain(codes[0]);
      await page.goto(`${server.url}/settings/two_factor_authentication_methods`);
      await expect(page.locator('main').textContent()).resolves.toContain('Recovery codes left: 10');
      await expectAccessible(page, 'two-factor methods (on)');
      await page.screenshot({ path: join(SCREENSHOTS, 'web-two-factor-methods.png'), fullPage: true });
      await context.close();

      // An app's log-in: password, then the code page (axe in both themes).
      const light = await newPage();
      const dark = await newPage({ dark: true });
      for (const p of [light.page, dark.page]) {
        const client = await registerApp(server.url, OOB, 'read');
        await p.goto(`${server.url}${authorizeUrl(client, { redirectUri: OOB, scope: 'read' })}`);
        await p.getByLabel('E-mail address').fill('tess@example.test');
        await p.getByLabel('Password', { exact: true }).fill(tess.password);
        await submit(p, 'Log in');
        await expect(p.getByLabel('Two-factor code').count()).resolves.toBe(1);
        await expectAccessible(p, 'two-factor log-in');
      }
      await dark.page.screenshot({ path: join(SCREENSHOTS, 'web-two-factor-login-dark.png'), fullPage: true });
      // Not signed in yet: the password alone gives no session.
      await light.page.goto(`${server.url}/auth/edit`);
      expect(new URL(light.page.url()).pathname).toBe('/auth/sign_in');
      await light.context.close();
      await dark.context.close();

      // The code used to confirm the setup cannot be used again; a wrong one neither.
      const replay = await newPage();
      const client = await registerApp(server.url, OOB, 'read');
      await replay.page.goto(`${server.url}${authorizeUrl(client, { redirectUri: OOB, scope: 'read' })}`);
      await replay.page.getByLabel('E-mail address').fill('tess@example.test');
      await replay.page.getByLabel('Password', { exact: true }).fill(tess.password);
      await submit(replay.page, 'Log in');
      for (const wrong of [used, '12345', 'ffffffffff']) {
        await replay.page.getByLabel('Two-factor code').fill(wrong);
        await submit(replay.page, 'Log in');
        await expect(replay.page.getByRole('alert').textContent()).resolves.toBe('Invalid two-factor code.');
      }
      await replay.context.close();

      // The next code (the app's clock a little ahead is allowed) gives a working token.
      const withCode = await newPage();
      const token = await appToken(withCode.page, 'tess@example.test', tess.password, totpCode(secret, 1));
      expect(await verifyCredentials(token)).toBe(200);
      await withCode.context.close();

      // A recovery code works once.
      const withRecovery = await newPage();
      const token2 = await appToken(withRecovery.page, 'tess@example.test', tess.password, codes[3]);
      expect(await verifyCredentials(token2)).toBe(200);
      await withRecovery.context.close();
      const again = await newPage();
      await logIn(again.page, 'tess@example.test', tess.password);
      await again.page.getByLabel('Two-factor code').fill(codes[3]);
      await submit(again.page, 'Log in');
      await expect(again.page.getByRole('alert').textContent()).resolves.toBe('Invalid two-factor code.');
      // Another recovery code logs this browser in.
      await again.page.getByLabel('Two-factor code').fill(codes[4].toUpperCase());
      await submit(again.page, 'Log in');
      expect(new URL(again.page.url()).pathname).toBe('/auth/edit');

      // New recovery codes (password required): the old ones stop working.
      await again.page.goto(`${server.url}/settings/two_factor_authentication_methods`);
      await expect(again.page.locator('main').textContent()).resolves.toContain('Recovery codes left: 8');
      await again.page.locator('#regenerate_password').fill('not the password');
      await submit(again.page, 'Generate recovery codes');
      await expect(again.page.getByRole('alert').textContent()).resolves.toBe('Invalid password or two-factor code.');
      await again.page.locator('#regenerate_password').fill(tess.password);
      await submit(again.page, 'Generate recovery codes');
      const fresh = (await again.page.locator('ol.recovery-codes code').allTextContents()).map((c) => c.trim());
      expect(fresh).toHaveLength(10);
      expect(fresh).not.toContain(codes[0]);
      const check = await newPage();
      await logIn(check.page, 'tess@example.test', tess.password);
      await check.page.getByLabel('Two-factor code').fill(codes[0]);
      await submit(check.page, 'Log in');
      await expect(check.page.getByRole('alert').textContent()).resolves.toBe('Invalid two-factor code.');
      await check.page.getByLabel('Two-factor code').fill(fresh[0]);
      await submit(check.page, 'Log in');
      expect(new URL(check.page.url()).pathname).toBe('/auth/edit');
      await check.context.close();

      // Turned off with the password: the next log-in asks for no code.
      await again.page.goto(`${server.url}/settings/two_factor_authentication_methods`);
      await again.page.locator('#disable_password').fill(tess.password);
      await submit(again.page, 'Disable two-factor authentication');
      await expect(again.page.getByRole('status').first().textContent()).resolves.toBe(
        'Two-factor authentication successfully disabled.',
      );
      await again.context.close();
      const plain = await newPage();
      const token3 = await appToken(plain.page, 'tess@example.test', tess.password, null);
      expect(await verifyCredentials(token3)).toBe(200);
      await plain.context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'an administrator with manage_users resets the two-factor of a user through the admin API',
    async () => {
      const ola = await createTestUser(core, { username: 'ola', email: 'ola@example.test' });
      const admin = await createTestUser(core, { username: 'ada', role: 'Admin', scopes: ['read', 'admin:write'] });
      const other = await createTestUser(core, { username: 'ned', scopes: ['read', 'admin:write'] });
      const { context, page } = await newPage();
      await logIn(page, 'ola@example.test', ola.password);
      await enable(page, ola.password);
      await context.close();

      const reset = (token: string) =>
        fetch(`${server.url}/api/v1/admin/accounts/${ola.account._id}/disable_2fa`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
      const refused = await reset(other.token);
      expect(refused.status).toBe(403);
      await refused.body?.cancel();
      expect((await collection(core.db, users).findOne({ _id: ola.user._id }))!.otpRequiredForLogin).toBe(true);

      const done = await reset(admin.token);
      expect(done.status).toBe(200);
      await expect(done.json()).resolves.toMatchObject({ id: String(ola.account._id), username: 'ola' });
      const user = await collection(core.db, users).findOne({ _id: ola.user._id });
      expect(user).toMatchObject({ otpRequiredForLogin: false, otpSecret: null, otpBackupCodes: [] });
      await expect(
        collection(core.db, adminActions).findOne({ action: 'disable_2fa_user', targetId: String(ola.user._id) }),
      ).resolves.toMatchObject({ accountId: admin.account._id, humanIdentifier: 'ola' });

      const again = await newPage();
      const token = await appToken(again.page, 'ola@example.test', ola.password, null);
      expect(await verifyCredentials(token)).toBe(200);
      await again.context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'a role that requires two-factor sends its users to set it up before any page or app authorization',
    async () => {
      const role = await createRole(core, { name: 'Staff with 2FA', permissions: 0, position: 5 });
      // Mastodon's role setting (`cli roles update NAME --require-2fa`, tested with the CLI).
      await collection(core.db, roles).updateOne({ _id: role._id }, { $set: { require2fa: true } });
      const sam = await createTestUser(core, { username: 'sam', email: 'sam@example.test', role: 'Staff with 2FA' });
      const { context, page } = await newPage();
      await logIn(page, 'sam@example.test', sam.password);
      expect(new URL(page.url()).pathname).toBe('/settings/two_factor_authentication_methods');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(
        'Your role on this server requires two-factor authentication. Set it up to continue.',
      );
      await expectAccessible(page, 'two-factor required');
      for (const path of ['/settings/profile', '/auth/edit', '/oauth/authorized_applications']) {
        await page.goto(`${server.url}${path}`);
        expect(new URL(page.url()).pathname).toBe('/settings/two_factor_authentication_methods');
      }
      const client = await registerApp(server.url, OOB, 'read');
      await page.goto(`${server.url}${authorizeUrl(client, { redirectUri: OOB, scope: 'read' })}`);
      expect(new URL(page.url()).pathname).toBe('/settings/two_factor_authentication_methods');

      await enable(page, sam.password);
      await page.goto(`${server.url}/settings/profile`);
      expect(new URL(page.url()).pathname).toBe('/settings/profile');
      await context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'throttles log-in attempts per IP (25 in 5 minutes) and per account (25 an hour), with Retry-After',
    async () => {
      const http = new HttpBrowser(server.url);
      const form = hiddenFields(await (await http.get('/auth/sign_in')).text());
      const post = (fields: Record<string, string>, ip: string) =>
        fetch(`${server.url}/auth/sign_in`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            cookie: http.jar.header(),
            'content-type': 'application/x-www-form-urlencoded',
            'x-forwarded-for': ip,
          },
          body: new URLSearchParams({ ...form, ...fields }).toString(),
        });

      // Per IP: wrong passwords for many addresses; IPv6 addresses count by their /64. The 26th
      // attempt in a window is refused (should the 5-minute window turn meanwhile, a later one).
      let blocked: Response | null = null;
      let attempts = 0;
      while (!blocked && attempts < 50) {
        attempts += 1;
        const res = await post(
          { email: `nobody${attempts}@example.test`, password: 'wrong' },
          `2001:db8:1:2::${attempts}`,
        );
        if (res.status === 429) blocked = res;
        else {
          expect(res.status).toBe(401);
          await res.body?.cancel();
        }
      }
      expect(attempts).toBeGreaterThanOrEqual(26);
      expect(blocked!.status).toBe(429);
      expect(Number(blocked!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(blocked!.headers.get('retry-after'))).toBeLessThanOrEqual(300);
      await expect(blocked!.text()).resolves.toContain('Too many requests. Try again later.');
      const sameNet = await post({ email: 'nobody@example.test', password: 'wrong' }, '2001:db8:1:2:ffff::9');
      expect(sameNet.status).toBe(429);
      await sameNet.body?.cancel();
      const elsewhere = await post({ email: 'nobody@example.test', password: 'wrong' }, '2001:db8:1:3::1');
      expect(elsewhere.status).toBe(401);
      await elsewhere.body?.cancel();

      // Per account: the second factor guessed from many addresses.
      const gus = await createTestUser(core, { username: 'gus', email: 'gus@example.test' });
      const { context, page } = await newPage();
      await logIn(page, 'gus@example.test', gus.password);
      await enable(page, gus.password);
      await context.close();
      const first = await post({ email: 'gus@example.test', password: gus.password }, '198.51.100.1');
      http.jar.store(first);
      expect(first.status).toBe(200);
      await expect(first.text()).resolves.toContain('Two-factor code');
      let throttled: Response | null = null;
      let guesses = 0;
      while (!throttled && guesses < 50) {
        guesses += 1;
        const res = await post({ otp_attempt: '000000' }, `198.51.100.${guesses + 1}`);
        if (res.status === 429) throttled = res;
        // 000000 might be the current code once in a million runs: then it logs in (303).
        else {
          expect([401, 303]).toContain(res.status);
          await res.body?.cancel();
        }
      }
      expect(guesses).toBeGreaterThanOrEqual(26);
      expect(Number(throttled!.headers.get('retry-after'))).toBeGreaterThan(0);
      await throttled!.body?.cancel();
    },
    BROWSER_TEST_TIMEOUT,
  );
});
