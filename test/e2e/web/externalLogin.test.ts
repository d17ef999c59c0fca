// External log-in through OpenID Connect against a real provider (the certified `oidc-provider`
// package, in its own process: oidcProvider/server.ts), driven in Chromium: the first log-in makes
// the account (username from the uid claim, made unique; display name; e-mail confirmed when the
// provider vouches for it), later log-ins find it; closed registrations refuse new people. With
// OMNIAUTH_ONLY the log-in page and an app's OAuth flow lead straight to the provider, and the
// password log-in and sign-up are closed. Every page of ours passes axe-core.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { seriousAxeViolations } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { buildApi, type Api } from '../../../services/api/app.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { killChild, reportedPort, startNode, type ChildRun } from '../../support/processes.ts';
import { bindServer, type BoundServer } from '../../support/listening.ts';
import { authorizeUrl, Browser as HttpBrowser, hiddenFields, registerApp } from '../accounts/browser.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { users } from '../../../services/core/model/users.ts';
import { identities } from '../../../services/core/model/identities.ts';
import { setRegistrationsMode } from '../../../services/core/settings/settings.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');
const OOB = 'urn:ietf:wg:oauth:2.0:oob';

interface Instance {
  core: Core;
  api: Api;
  url: string;
}

// Several browser flows per test: generous on a loaded machine.
const BROWSER_TEST_TIMEOUT = 240_000;

describeWithBrowser('externalLogin.test.ts')('external log-in through OpenID Connect (Chromium, oidc-provider)', () => {
  let idp: ChildRun;
  let issuer: string;
  let browser: Browser;
  let plain: Instance;
  let only: Instance;
  const bound: BoundServer[] = [];

  async function instance(at: BoundServer, clientId: string, extra: Record<string, string>): Promise<Instance> {
    const url = `http://127.0.0.1:${at.port}`;
    const { core } = await createTestCore(
      testConfig({
        LOG_LEVEL: 'error',
        OIDC_ENABLED: 'true',
        OIDC_DISPLAY_NAME: 'Test IdP',
        OIDC_ISSUER: issuer,
        OIDC_DISCOVERY: 'true',
        OIDC_SCOPE: 'openid,profile,email',
        OIDC_UID_FIELD: 'preferred_username',
        OIDC_CLIENT_ID: clientId,
        OIDC_CLIENT_SECRET: 'fedisrv-secret',
        OIDC_REDIRECT_URI: `${url}/auth/auth/openid_connect/callback`,
        ...extra,
      }),
    );
    const api = await buildApi(core);
    await at.serve(api);
    return { core, api, url };
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 }, bypassCSP: true });
    // The provider's development pages load a web font; nothing leaves this machine.
    await context.route(/^https:\/\//, (route) => route.abort());
    return { context, page: await context.newPage() };
  }

  async function expectAccessible(page: Page, name: string): Promise<void> {
    const violations = await seriousAxeViolations(page);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  }

  /** At the provider: its log-in form (any password) and its consent page, then back to `back`. */
  async function atProvider(page: Page, login: string, back: string): Promise<void> {
    await page.waitForURL(`${issuer}/**`);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('anything');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign-in' }).click()]);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${back}/**`);
  }

  async function localUser(core: Core, username: string) {
    const account = await collection(core.db, accounts).findOne({ usernameLower: username, domain: null });
    const user = account ? await collection(core.db, users).findOne({ accountId: account._id }) : null;
    return { account, user };
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Our two instances' ports first (the provider registers their redirect URIs), then the
    // provider's (their configuration names its issuer).
    bound.push(await bindServer(), await bindServer());
    const [plainAt, onlyAt] = bound as [BoundServer, BoundServer];
    idp = startNode(
      'test/e2e/web/oidcProvider/server.ts',
      [
        `http://127.0.0.1:${plainAt.port}/auth/auth/openid_connect/callback`,
        `http://127.0.0.1:${onlyAt.port}/auth/auth/openid_connect/callback`,
      ],
      {},
    );
    issuer = `http://127.0.0.1:${await reportedPort(idp, /oidc provider ready http:\/\/127\.0\.0\.1:(\d+)/)}`;
    plain = await instance(plainAt, 'fedisrv', {});
    only = await instance(onlyAt, 'fedisrv1', {
      OMNIAUTH_ONLY: 'true',
      OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED: 'true',
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const i of [plain, only]) {
      await i?.api.close();
      if (i) await closeTestCore(i.core);
    }
    for (const b of bound) await b.close();
    if (idp) await killChild(idp);
  });

  it(
    'the first log-in makes the account, later ones find it; usernames made unique; closed registrations refuse',
    async () => {
      const { context, page } = await newPage();
      await page.goto(`${plain.url}/auth/sign_in`);
      // Both ways in: the password form and the provider.
      await expect(page.getByLabel('Password', { exact: true }).count()).resolves.toBe(1);
      await expectAccessible(page, 'sign in with a provider');
      await page.screenshot({ path: join(SCREENSHOTS, 'web-sign-in-oidc.png'), fullPage: true });
      await page.getByRole('link', { name: 'Log in with Test IdP' }).click();
      await atProvider(page, 'dana', plain.url);
      expect(new URL(page.url()).pathname).toBe('/auth/edit');
      await expect(page.locator('main').textContent()).resolves.toContain('dana@idp.test');
      const dana = await localUser(plain.core, 'dana');
      expect(dana.account).toMatchObject({ username: 'dana', displayName: 'Dana Scully' });
      expect(dana.user).toMatchObject({ email: 'dana@idp.test', approved: true });
      expect(dana.user!.confirmedAt).toBeInstanceOf(Date);
      await expect(
        collection(plain.core.db, identities).findOne({ provider: 'openid_connect', uid: 'dana' }),
      ).resolves.toMatchObject({ userId: dana.user!._id });
      // Signed in here: the settings pages open.
      await page.goto(`${plain.url}/settings/profile`);
      expect(new URL(page.url()).pathname).toBe('/settings/profile');
      await context.close();

      // Again, from a new browser: the same user, no second account.
      const again = await newPage();
      await again.page.goto(`${plain.url}/auth/sign_in`);
      await again.page.getByRole('link', { name: 'Log in with Test IdP' }).click();
      await atProvider(again.page, 'dana', plain.url);
      await expect(again.page.locator('main').textContent()).resolves.toContain('dana@idp.test');
      await expect(collection(plain.core.db, accounts).countDocuments({ usernameLower: /^dana/ })).resolves.toBe(1);
      await again.context.close();

      // Another person whose uid claim makes the same username: a suffix; names from given + family name.
      for (const [login, username, displayName] of [
        ['dana2', 'dana_1', 'Other Dana'],
        ['vic', 'victor', 'Vic Tor'],
      ]) {
        const other = await newPage();
        await other.page.goto(`${plain.url}/auth/sign_in`);
        await other.page.getByRole('link', { name: 'Log in with Test IdP' }).click();
        await atProvider(other.page, login, plain.url);
        expect(new URL(other.page.url()).pathname).toBe('/auth/edit');
        expect((await localUser(plain.core, username)).account).toMatchObject({ username, displayName });
        await other.context.close();
      }

      // An address the provider does not vouch for must be confirmed first: Mastodon's message.
      const uma = await newPage();
      await uma.page.goto(`${plain.url}/auth/sign_in`);
      await uma.page.getByRole('link', { name: 'Log in with Test IdP' }).click();
      await atProvider(uma.page, 'uma', plain.url);
      await expect(uma.page.locator('main').textContent()).resolves.toContain(
        'You have to confirm your email address before continuing.',
      );
      await expectAccessible(uma.page, 'external log-in refused');
      expect((await localUser(plain.core, 'uma')).user).toMatchObject({ confirmedAt: null });
      await uma.context.close();

      // Closed registrations: nobody new, but known people still log in.
      await setRegistrationsMode(plain.core, 'closed');
      try {
        const wes = await newPage();
        await wes.page.goto(`${plain.url}/auth/sign_in`);
        await wes.page.getByRole('link', { name: 'Log in with Test IdP' }).click();
        await atProvider(wes.page, 'wes', plain.url);
        await expect(wes.page.locator('main').textContent()).resolves.toContain('does not accept new members');
        expect((await localUser(plain.core, 'wes')).account).toBeNull();
        await wes.context.close();
        const known = await newPage();
        await known.page.goto(`${plain.url}/auth/sign_in`);
        await known.page.getByRole('link', { name: 'Log in with Test IdP' }).click();
        await atProvider(known.page, 'dana', plain.url);
        expect(new URL(known.page.url()).pathname).toBe('/auth/edit');
        await known.context.close();
      } finally {
        await setRegistrationsMode(plain.core, 'open');
      }
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'refuses a callback that did not start here (no flow cookie, a forged state)',
    async () => {
      const res = await fetch(`${plain.url}/auth/auth/openid_connect/callback?code=stolen&state=forged`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(401);
      await expect(res.text()).resolves.toContain('Could not authenticate you from Test IdP');
      expect(res.headers.getSetCookie().some((c) => c.startsWith('_session_id='))).toBe(false);
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'OMNIAUTH_ONLY: the log-in page and an app’s OAuth flow lead straight to the provider; no password log-in, no sign-up',
    async () => {
      const res = await fetch(`${only.url}/auth/sign_in`, { redirect: 'manual' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/auth/auth/openid_connect?return_to=%2Fauth%2Fedit');
      await res.body?.cancel();

      // An app's authorization: provider, then our consent page, then a token for the new account.
      const client = await registerApp(only.url, OOB, 'read');
      const { context, page } = await newPage();
      await page.goto(`${only.url}${authorizeUrl(client, { redirectUri: OOB, scope: 'read' })}`);
      await atProvider(page, 'uma', only.url);
      // OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED: the address counts as confirmed.
      await expect(page.getByRole('button', { name: 'Authorize' }).count()).resolves.toBe(1);
      await expectAccessible(page, 'consent after external log-in');
      await Promise.all([
        page.waitForURL('**/oauth/authorize/native?**'),
        page.getByRole('button', { name: 'Authorize' }).click(),
      ]);
      const code = (await page.locator('#authorization-code').textContent())!.trim();
      await context.close();
      const token = await fetch(`${only.url}/oauth/token`, {
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
      expect(token.status).toBe(200);
      const { access_token } = (await token.json()) as { access_token: string };
      const me = await fetch(`${only.url}/api/v1/accounts/verify_credentials`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      await expect(me.json()).resolves.toMatchObject({ username: 'uma', display_name: 'Uma' });

      // The password form is gone, and a password posted anyway is refused.
      const pat = await createTestUser(only.core, { username: 'pat', email: 'pat@example.test' });
      const http = new HttpBrowser(only.url);
      const form = hiddenFields(await (await http.get('/auth/password/new')).text());
      const refused = await http.post('/auth/sign_in', { ...form, email: 'pat@example.test', password: pat.password });
      expect(refused.status).toBe(403);
      await expect(refused.text()).resolves.toContain('Logging in with a password is disabled on this server.');
      expect(http.jar.has('_session_id')).toBe(false);
      // No sign-up, by page or by API.
      const signUp = await http.get('/auth/sign_up');
      expect(signUp.status).toBe(403);
      await signUp.body?.cancel();
      const api = await fetch(`${only.url}/api/v2/instance`);
      await expect(api.json()).resolves.toMatchObject({ registrations: { enabled: false } });
    },
    BROWSER_TEST_TIMEOUT,
  );
});
