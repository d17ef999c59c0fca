// A real browser (Debian's Chromium driven by playwright-core) through the OAuth pages: the log-in
// form, the consent page (admin scopes shown apart), approval landing on the app's redirect URI
// (a tiny HTTP server on 127.0.0.1) with code and state, the PKCE exchange, denial, force_login,
// and the e-mail confirmation link opened in the browser returning to the app. Screenshots of the
// log-in and consent pages go to var/screenshots/ for a person to look at.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import type { Core } from '../../../services/core/context.ts';
import { runMailerPipeline } from '../../../pipelines/mailer/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { authorizeUrl, pkcePair, registerApp, type RegisteredApp } from '../accounts/browser.ts';
import { SmtpSink, confirmationLink } from '../../support/smtpSink.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

/** The app's side: a page on 127.0.0.1 that records the query of every request it gets. */
class RedirectTarget {
  readonly hits: URL[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.url);
      if (url.pathname === '/favicon.ico') {
        res.writeHead(404).end();
        return;
      }
      this.hits.push(url);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><title>Client app</title><h1>Back in the app</h1>');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describeWithBrowser('browser.test.ts')('OAuth pages in a real browser (Chromium)', () => {
  const target = new RedirectTarget();
  const smtp = new SmtpSink();
  let core: Core;
  let server: TestServer;
  let mailer: Pipeline;
  let browser: Browser;
  let alice: TestUser;
  let app: RegisteredApp;
  let callback: string;

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    return { context, page: await context.newPage() };
  }

  async function exchange(
    code: string,
    verifier: string,
    redirectUri = callback,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: app.client_id,
        client_secret: app.client_secret,
        code_verifier: verifier,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function logIn(page: Page, email: string, password: string): Promise<void> {
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Log in' }).click()]);
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await target.start();
    await smtp.start();
    callback = `${target.url}/callback`;
    ({ core } = await createTestCore(
      testConfig({
        SMTP_SERVER: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_FROM_ADDRESS: 'notifications@social.test',
      }),
    ));
    server = await startTestServer(core);
    mailer = await runMailerPipeline(core, {
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 100,
      lagIntervalMs: 0,
      retryDelaysMs: [200],
    });
    alice = await createTestUser(core, { username: 'alice', email: 'alice@example.test' });
    app = await registerApp(
      server.url,
      `${callback}\nurn:ietf:wg:oauth:2.0:oob`,
      'read write follow push admin:read admin:write:accounts',
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await mailer?.stop();
    await server?.close();
    if (core) await closeTestCore(core);
    await smtp.stop();
    await target.stop();
  });

  it('logs in, shows the consent page with admin scopes apart, approves, lands on the app with code and state; PKCE exchange', async () => {
    const { context, page } = await newPage();
    const { challenge } = pkcePair();
    const scope = 'read write admin:read admin:write:accounts';
    await page.goto(
      `${server.url}${authorizeUrl(app, { redirectUri: callback, scope, state: 'st-approve', challenge })}`,
    );

    // The log-in page: a real form with labelled fields and a submit button.
    expect(await page.title()).toContain('Log in');
    await expect(page.getByLabel('E-mail address').isVisible()).resolves.toBe(true);
    await expect(page.getByLabel('Password').getAttribute('type')).resolves.toBe('password');
    await page.screenshot({ path: join(SCREENSHOTS, 'oauth-login.png'), fullPage: true });

    // A wrong password shows the form again with an error.
    await logIn(page, 'alice@example.test', 'not the password');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Invalid E-mail address or password.');
    await expect(page.getByLabel('E-mail address').inputValue()).resolves.toBe('alice@example.test');
    await logIn(page, 'alice@example.test', alice.password);

    // The consent page: the app's name, the account, the scopes, admin scopes in their own box.
    expect(page.url()).toContain('/oauth/authorize?');
    const body = page.locator('main');
    await expect(body.textContent()).resolves.toContain('Browser test client');
    await expect(body.textContent()).resolves.toContain('@alice');
    const normal = await page.locator('#scopes').textContent();
    expect(normal).toContain('Read all your account data');
    expect(normal).toContain('Modify all your account data');
    expect(normal).not.toContain('admin:');
    const dangerous = await page.locator('#dangerous-scopes').textContent();
    expect(dangerous).toContain('admin:read');
    expect(dangerous).toContain('admin:write:accounts');
    expect(await page.locator('#dangerous-scopes').isVisible()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'oauth-consent.png'), fullPage: true });

    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Authorize' }).click()]);
    const landed = new URL(page.url());
    expect(landed.origin + landed.pathname).toBe(callback);
    expect(landed.searchParams.get('state')).toBe('st-approve');
    const code = landed.searchParams.get('code');
    expect(code).toBeTruthy();
    expect(target.hits.at(-1)?.searchParams.get('code')).toBe(code);

    // The code needs the PKCE verifier, and works once.
    expect((await exchange(code!, pkcePair().verifier)).status).toBe(400);
    const { verifier: v2, challenge: c2 } = pkcePair();
    await page.goto(
      `${server.url}${authorizeUrl(app, { redirectUri: callback, scope, state: 'st-2', challenge: c2 })}`,
    );
    // Still logged in: straight to the consent page.
    await expect(page.getByRole('button', { name: 'Authorize' }).isVisible()).resolves.toBe(true);
    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Authorize' }).click()]);
    const code2 = new URL(page.url()).searchParams.get('code')!;
    const token = await exchange(code2, v2);
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope, access_token: expect.any(String) });
    const me = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, {
      headers: { authorization: `Bearer ${String(token.body.access_token)}` },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'alice' });
    // A replayed code is refused (RFC 6749 10.5: and what it issued is revoked).
    expect((await exchange(code2, v2)).status).toBe(400);
    await context.close();
  });

  it('denying lands on the app with access_denied and the state', async () => {
    const { context, page } = await newPage();
    await page.goto(`${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 'st-deny' })}`);
    await logIn(page, 'alice@example.test', alice.password);
    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Deny' }).click()]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('st-deny');
    expect(landed.searchParams.get('code')).toBeNull();
    await context.close();
  });

  it('force_login asks for the password again even with a live session, and may switch accounts', async () => {
    const bob = await createTestUser(core, { username: 'bob', email: 'bob@example.test' });
    const { context, page } = await newPage();
    await page.goto(`${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 's' })}`);
    await logIn(page, 'alice@example.test', alice.password);
    await expect(page.locator('main').textContent()).resolves.toContain('@alice');

    // Without force_login the session is reused; with it, the log-in form comes back.
    await page.goto(`${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 's' })}`);
    await expect(page.getByRole('button', { name: 'Authorize' }).isVisible()).resolves.toBe(true);
    await page.goto(
      `${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 's-force', extra: { force_login: 'true' } })}`,
    );
    await expect(page.getByRole('button', { name: 'Log in' }).isVisible()).resolves.toBe(true);
    await logIn(page, 'bob@example.test', bob.password);
    await expect(page.locator('main').textContent()).resolves.toContain('@bob');
    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Authorize' }).click()]);
    expect(new URL(page.url()).searchParams.get('state')).toBe('s-force');
    await context.close();
  });

  it('the e-mail confirmation link, opened in the browser, confirms and returns to the app', async () => {
    const appToken = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: app.client_id,
        client_secret: app.client_secret,
        scope: 'read write',
      }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    const signUp = await fetch(`${server.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        username: 'carol',
        email: 'carol@example.test',
        password: 'a long password',
        agreement: true,
        locale: 'en',
      }),
    });
    expect(signUp.status).toBe(200);
    const userToken = ((await signUp.json()) as { access_token: string }).access_token;
    const link = new URL(confirmationLink(await smtp.waitFor('carol@example.test')));

    const { context, page } = await newPage();
    const hitsBefore = target.hits.length;
    // The link names the configured domain; the browser opens the same path on the test server.
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page.waitForURL(callback);
    expect(target.hits.length).toBe(hitsBefore + 1);
    const me = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, {
      headers: { authorization: `Bearer ${userToken}` },
    });
    expect(me.status).toBe(200);

    // A second visit shows a readable error page, not a redirect.
    const again = await page.goto(`${server.url}${link.pathname}${link.search}`);
    expect(again?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Confirmation failed');
    await context.close();
  });
  it('out of band: the code is shown on a page to copy, and works with PKCE; errors are readable pages', async () => {
    const { context, page } = await newPage();
    const oob = 'urn:ietf:wg:oauth:2.0:oob';
    const { verifier, challenge } = pkcePair();
    await page.goto(`${server.url}${authorizeUrl(app, { redirectUri: oob, scope: 'read', challenge })}`);
    await logIn(page, 'alice@example.test', alice.password);
    await Promise.all([
      page.waitForURL('**/oauth/authorize/native?**'),
      page.getByRole('button', { name: 'Authorize' }).click(),
    ]);
    // Marked like Mastodon's page (class oauth-code), for tools that scrape it.
    const code = (await page.locator('.oauth-code').textContent())!.trim();
    expect(code).toBe(new URL(page.url()).searchParams.get('code'));
    await page.screenshot({ path: join(SCREENSHOTS, 'oauth-code.png'), fullPage: true });
    expect((await exchange(code, verifier, oob)).status).toBe(200);

    // An unknown client gets an error page, never a redirect.
    const res = await page.goto(
      `${server.url}/oauth/authorize?response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(callback)}`,
    );
    expect(res?.status()).toBe(401);
    expect(page.url()).toContain(server.url);
    await expect(page.locator('h1').textContent()).resolves.toBe('An error has occurred');
    await context.close();
  });
  it('two tabs: the older log-in form still works after a second one was opened, and the page survives a reload', async () => {
    const { context, page } = await newPage();
    const url = `${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 'tab-a' })}`;
    await page.goto(url);
    const second = await context.newPage();
    await second.goto(`${server.url}${authorizeUrl(app, { redirectUri: callback, scope: 'read', state: 'tab-b' })}`);
    await second.reload();
    await logIn(page, 'alice@example.test', alice.password);
    await expect(page.getByRole('button', { name: 'Authorize' }).isVisible()).resolves.toBe(true);
    // The consent page reloaded (a new CSRF token) still approves.
    await page.reload();
    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Authorize' }).click()]);
    expect(new URL(page.url()).searchParams.get('state')).toBe('tab-a');
    await context.close();
  });
  it('a native app with a custom-scheme redirect URI gets the code in the Location the browser is sent to', async () => {
    const nativeRedirect = 'org.example.app://oauth/callback';
    const nativeApp = await registerApp(server.url, nativeRedirect, 'read write');
    const { context, page } = await newPage();
    const { verifier, challenge } = pkcePair();
    await page.goto(
      `${server.url}${authorizeUrl(nativeApp, { redirectUri: nativeRedirect, scope: 'read write', state: 'native', challenge })}`,
    );
    await logIn(page, 'alice@example.test', alice.password);
    const approved = page.waitForResponse(
      (r) => r.url() === `${server.url}/oauth/authorize` && r.request().method() === 'POST',
    );
    await page
      .getByRole('button', { name: 'Authorize' })
      .click({ noWaitAfter: true })
      .catch(() => undefined);
    const res = await approved;
    expect(res.status()).toBe(302);
    const location = new URL(res.headers().location);
    expect(`${location.protocol}//${location.host}${location.pathname}`).toBe(nativeRedirect);
    expect(location.searchParams.get('state')).toBe('native');
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code')!,
        redirect_uri: nativeRedirect,
        client_id: nativeApp.client_id,
        client_secret: nativeApp.client_secret,
        code_verifier: verifier,
      }),
    });
    expect(token.status).toBe(200);
    await context.close();
  });
});
