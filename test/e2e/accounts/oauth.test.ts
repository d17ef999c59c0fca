// The OAuth 2 flows over real HTTP: app registration, log-in and consent pages with cookies and
// CSRF, authorization code with PKCE (and the refusals), client credentials, revocation,
// userinfo and the server metadata.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer, type TestUser } from '../../support/fixtures.ts';
import {
  approve,
  authorizeUrl,
  Browser,
  hiddenFields,
  logInAndReachConsent,
  pkcePair,
  registerApp,
  type RegisteredApp,
} from './browser.ts';

const REDIRECT = 'https://client.example/callback';

describe('OAuth 2 over HTTP', () => {
  let testApi: TestApi;
  let core: Core;
  let server: TestServer;
  let alice: TestUser;
  let app: RegisteredApp;
  let browser: Browser;
  let consentHtml: string;

  async function token(
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  }

  async function newCode(challenge: string): Promise<string> {
    const page = await browser.get(
      authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read write', state: 'st', challenge }),
    );
    const location = new URL(await approve(browser, await page.text()));
    return location.searchParams.get('code') as string;
  }

  async function api(path: string, tok: string): Promise<Response> {
    return fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${tok}` } });
  }

  beforeAll(async () => {
    testApi = await startTestApi();
    ({ core, server } = testApi);
    alice = await createTestUser(core, { username: 'alice', email: 'alice@example.test' });
    app = await registerApp(
      server.url,
      `${REDIRECT}\nurn:ietf:wg:oauth:2.0:oob`,
      'read write follow push admin:read profile',
    );
    browser = new Browser(server.url);
  });

  afterAll(async () => {
    await testApi?.close();
  });

  it('shows a login page, then a consent page listing the scopes with dangerous ones apart', async () => {
    const { challenge } = pkcePair();
    const path = authorizeUrl(app, {
      redirectUri: REDIRECT,
      scope: 'read write admin:read',
      state: 'xyz',
      challenge,
      extra: { lang: 'de' },
    });
    const login = await browser.get(path);
    const loginHtml = await login.text();
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toMatch(/text\/html/);
    expect(loginHtml).toContain('<html lang="de">');
    expect(hiddenFields(loginHtml)._csrf).toBeTruthy();

    // A form without the CSRF token is refused.
    const forged = await browser.post('/auth/sign_in', {
      email: 'alice@example.test',
      password: alice.password,
      return_to: path,
    });
    expect(forged.status).toBe(403);
    // A wrong password shows the page again.
    const wrong = await browser.post('/auth/sign_in', {
      ...hiddenFields(loginHtml),
      email: 'alice@example.test',
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Invalid E-mail address or password.');

    consentHtml = await logInAndReachConsent(browser, path, 'alice@example.test', alice.password);
    expect(browser.jar.has('_session_id')).toBe(true);
    expect(consentHtml).toContain('Browser test client');
    expect(consentHtml).toContain('@alice');
    const [normal, dangerous] = consentHtml.split('id="dangerous-scopes"');
    expect(normal).toContain('<small>read</small>');
    expect(normal).toContain('<small>write</small>');
    expect(normal).not.toContain('<small>admin:read</small>');
    expect(dangerous).toContain('<small>admin:read</small>');
  });

  it('redirects back with a code and the state, and the code with its PKCE verifier gives a user token', async () => {
    const { verifier, challenge } = pkcePair();
    const page = await browser.get(
      authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read write', state: 'state-1', challenge }),
    );
    const html = await page.text();
    const location = new URL(await approve(browser, html));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('state-1');
    const code = location.searchParams.get('code') as string;

    const ok = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      client_secret: app.client_secret,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      scope: 'read write',
      created_at: expect.any(Number),
    });
    expect(ok.body).not.toHaveProperty('expires_in');
    expect(ok.body).not.toHaveProperty('refresh_token');
    const me = await api('/api/v1/accounts/verify_credentials', ok.body.access_token as string);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe('alice');

    // Replaying the code is refused, and the token it gave is revoked (RFC 6749 §4.1.2).
    const replay = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      client_secret: app.client_secret,
      code_verifier: verifier,
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await api('/api/v1/accounts/verify_credentials', ok.body.access_token as string)).status).toBe(401);
  });

  it('refuses a wrong PKCE verifier, a missing verifier and a different redirect URI', async () => {
    const { verifier, challenge } = pkcePair();
    const base = {
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      client_secret: app.client_secret,
    };
    const wrongVerifier = await token({ ...base, code: await newCode(challenge), code_verifier: pkcePair().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe('invalid_grant');
    const missing = await token({ ...base, code: await newCode(challenge) });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_grant');
    const wrongRedirect = await token({
      ...base,
      redirect_uri: 'https://client.example/other',
      code: await newCode(challenge),
      code_verifier: verifier,
    });
    expect(wrongRedirect.status).toBe(400);
    expect(wrongRedirect.body.error).toBe('invalid_grant');
    const wrongSecret = await token({
      ...base,
      client_secret: 'nope',
      code: await newCode(challenge),
      code_verifier: verifier,
    });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe('invalid_client');
  });

  it('reuses an existing token for the same app, user and scopes, and accepts HTTP Basic client authentication', async () => {
    const { verifier, challenge } = pkcePair();
    const basic = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
    const first = await token(
      {
        grant_type: 'authorization_code',
        code: await newCode(challenge),
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      { authorization: basic },
    );
    const second = await token(
      {
        grant_type: 'authorization_code',
        code: await newCode(challenge),
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      { authorization: basic },
    );
    expect(first.status).toBe(200);
    expect(second.body.access_token).toBe(first.body.access_token);
  });

  it('denies: redirect with access_denied and the state', async () => {
    const page = await browser.get(authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read', state: 'deny-state' }));
    const res = await browser.post('/oauth/authorize', { ...hiddenFields(await page.text()), decision: 'deny' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') as string);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('deny-state');
  });

  it('shows the code for the out-of-band redirect URI', async () => {
    const page = await browser.get(authorizeUrl(app, { redirectUri: 'urn:ietf:wg:oauth:2.0:oob', scope: 'read' }));
    const location = await approve(browser, await page.text());
    expect(location).toMatch(/^\/oauth\/authorize\/native\?code=/);
    const code = new URL(location, server.url).searchParams.get('code') as string;
    const shown = await browser.get(location);
    expect(await shown.text()).toContain(code);
    const t = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'urn:ietf:wg:oauth:2.0:oob',
      client_id: app.client_id,
      client_secret: app.client_secret,
    });
    expect(t.status).toBe(200);
  });

  it('force_login signs the browser out and shows the login page', async () => {
    const res = await browser.get(
      authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read', extra: { force_login: 'true' } }),
    );
    const html = await res.text();
    expect(html).toContain('action="/auth/sign_in"');
    expect(hiddenFields(html).return_to).not.toContain('force_login');
    // Log in again for later tests.
    consentHtml = await logInAndReachConsent(
      browser,
      authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read' }),
      'alice@example.test',
      alice.password,
    );
  });

  it('shows an error page, never a redirect, for an unknown client or redirect URI; reports other errors by redirect', async () => {
    const unknownClient = await browser.get(
      `/oauth/authorize?response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    );
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.headers.get('location')).toBeNull();
    const badRedirect = await browser.get(authorizeUrl(app, { redirectUri: 'https://evil.example/cb', scope: 'read' }));
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.headers.get('location')).toBeNull();

    const plain = await browser.get(
      `${authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read', state: 'p' })}&code_challenge=${'a'.repeat(43)}&code_challenge_method=plain`,
    );
    expect(plain.status).toBe(302);
    expect(new URL(plain.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');
    const scope = await browser.get(authorizeUrl(app, { redirectUri: REDIRECT, scope: 'admin:write' }));
    expect(new URL(scope.headers.get('location') as string).searchParams.get('error')).toBe('invalid_scope');
    const responseType = await browser.get(
      authorizeUrl(app, { redirectUri: REDIRECT, scope: 'read' }).replace('response_type=code', 'response_type=token'),
    );
    expect(new URL(responseType.headers.get('location') as string).searchParams.get('error')).toBe(
      'unsupported_response_type',
    );
  });

  it('client credentials: app tokens, scopes within the app, apps/verify_credentials with vapid_key', async () => {
    const t = await token({
      grant_type: 'client_credentials',
      client_id: app.client_id,
      client_secret: app.client_secret,
      scope: 'read write',
    });
    expect(t.status).toBe(200);
    expect(t.body.scope).toBe('read write');
    const verify = await api('/api/v1/apps/verify_credentials', t.body.access_token as string);
    expect(verify.status).toBe(200);
    expect(await verify.json()).toEqual({
      id: app.id,
      name: 'Browser test client',
      website: 'https://client.example',
      scopes: ['read', 'write', 'follow', 'push', 'admin:read', 'profile'],
      redirect_uris: [REDIRECT, 'urn:ietf:wg:oauth:2.0:oob'],
      redirect_uri: `${REDIRECT}\nurn:ietf:wg:oauth:2.0:oob`,
      vapid_key: expect.any(String),
    });
    // An app token is not a user.
    expect((await api('/api/v1/accounts/verify_credentials', t.body.access_token as string)).status).toBe(422);
    const defaultScope = await token({
      grant_type: 'client_credentials',
      client_id: app.client_id,
      client_secret: app.client_secret,
    });
    expect(defaultScope.body.scope).toBe('read');
    const outside = await token({
      grant_type: 'client_credentials',
      client_id: app.client_id,
      client_secret: app.client_secret,
      scope: 'admin:write',
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe('invalid_scope');
  });

  it('answers the removed password grant and unknown grants with unsupported_grant_type', async () => {
    const pw = await token({
      grant_type: 'password',
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: 'alice@example.test',
      password: alice.password,
    });
    expect(pw.status).toBe(400);
    expect(pw.body.error).toBe('unsupported_grant_type');
    const refresh = await token({
      grant_type: 'refresh_token',
      client_id: app.client_id,
      client_secret: app.client_secret,
      refresh_token: 'x',
    });
    expect(refresh.body.error).toBe('unsupported_grant_type');
  });

  it('revokes tokens (idempotently) and refuses to revoke another client’s token', async () => {
    const t = await token({
      grant_type: 'client_credentials',
      client_id: app.client_id,
      client_secret: app.client_secret,
      scope: 'push',
    });
    const other = await registerApp(server.url, REDIRECT, 'read');
    const revoke = (fields: Record<string, string>) =>
      fetch(`${server.url}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    const foreign = await revoke({
      client_id: other.client_id,
      client_secret: other.client_secret,
      token: t.body.access_token as string,
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({
      error: 'unauthorized_client',
      error_description: 'You are not authorized to revoke this token',
    });
    const res = await revoke({
      client_id: app.client_id,
      client_secret: app.client_secret,
      token: t.body.access_token as string,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(
      (
        await revoke({
          client_id: app.client_id,
          client_secret: app.client_secret,
          token: t.body.access_token as string,
        })
      ).status,
    ).toBe(200);
    expect((await api('/api/v1/apps/verify_credentials', t.body.access_token as string)).status).toBe(401);
  });

  it('userinfo needs the profile scope and describes the user', async () => {
    const { verifier, challenge } = pkcePair();
    const page = await browser.get(authorizeUrl(app, { redirectUri: REDIRECT, scope: 'profile', challenge }));
    const code = new URL(await approve(browser, await page.text())).searchParams.get('code') as string;
    const t = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      client_secret: app.client_secret,
      code_verifier: verifier,
    });
    const res = await fetch(`${server.url}/oauth/userinfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.body.access_token as string}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      iss: expect.stringMatching(/\/$/),
      sub: alice.account.uri,
      name: 'alice',
      preferred_username: 'alice',
      profile: alice.account.url,
      picture: expect.stringContaining('/avatars/original/missing.png'),
    });
    // A profile-only token cannot write.
    const patch = await fetch(`${server.url}/api/v1/accounts/update_credentials`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${t.body.access_token as string}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'x' }),
    });
    expect(patch.status).toBe(403);
    expect(await patch.json()).toEqual({ error: 'This action is outside the authorized scopes' });
  });

  it('publishes the authorization server metadata', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      authorization_endpoint: `${core.config.baseUrl}/oauth/authorize`,
      token_endpoint: `${core.config.baseUrl}/oauth/token`,
      revocation_endpoint: `${core.config.baseUrl}/oauth/revoke`,
      userinfo_endpoint: `${core.config.baseUrl}/oauth/userinfo`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'client_credentials'],
      response_types_supported: ['code'],
    });
    expect(meta.scopes_supported).toEqual(
      expect.arrayContaining(['read', 'write', 'follow', 'push', 'profile', 'read:bookmarks', 'admin:read:accounts']),
    );
  });

  it('validates app registration', async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/api/v1/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await post({ client_name: 'x', redirect_uris: 'not a uri' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({ error: 'Validation failed: Redirect URI must be an absolute URI.' });
    expect((await post({ client_name: 'x', redirect_uris: REDIRECT, scopes: 'read fly' })).status).toBe(422);
    expect((await post({ redirect_uris: REDIRECT })).status).toBe(422);
    const form = await fetch(`${server.url}/api/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_name=Form&redirect_uris[]=https://a.example/cb&redirect_uris[]=urn:ietf:wg:oauth:2.0:oob&scopes=read+write',
    });
    const created = (await form.json()) as Record<string, unknown>;
    expect(created).toMatchObject({
      name: 'Form',
      scopes: ['read', 'write'],
      redirect_uris: ['https://a.example/cb', 'urn:ietf:wg:oauth:2.0:oob'],
      client_secret_expires_at: 0,
      website: null,
    });
    expect(created.client_id).toEqual(expect.any(String));
    expect(created.client_secret).toEqual(expect.any(String));
  });
});
