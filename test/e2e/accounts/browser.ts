// A minimal browser for the OAuth pages: a cookie jar, form field extraction and the log-in +
// consent sequence, all over real HTTP.
import { createHash, randomBytes } from 'node:crypto';

export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }
}

export class Browser {
  readonly jar = new CookieJar();
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async get(path: string): Promise<Response> {
    const res = await fetch(new URL(path, this.base), { redirect: 'manual', headers: { cookie: this.jar.header() } });
    this.jar.store(res);
    return res;
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const res = await fetch(new URL(path, this.base), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    this.jar.store(res);
    return res;
  }
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The hidden inputs of the (first) form on a page. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    out[unescapeHtml(m[1])] = unescapeHtml(m[2]);
  return out;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface RegisteredApp {
  client_id: string;
  client_secret: string;
  id: string;
}

export async function registerApp(base: string, redirectUris: string, scopes: string): Promise<RegisteredApp> {
  const res = await fetch(`${base}/api/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Browser test client',
      redirect_uris: redirectUris,
      scopes,
      website: 'https://client.example',
    }),
  });
  if (res.status !== 200) throw new Error(`app registration failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as RegisteredApp;
}

export function authorizeUrl(
  app: RegisteredApp,
  opts: { redirectUri: string; scope: string; state?: string; challenge?: string; extra?: Record<string, string> },
): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: opts.redirectUri,
    scope: opts.scope,
    ...(opts.extra ?? {}),
  });
  if (opts.state) q.set('state', opts.state);
  if (opts.challenge) {
    q.set('code_challenge', opts.challenge);
    q.set('code_challenge_method', 'S256');
  }
  return `/oauth/authorize?${q}`;
}

/** Logs in through the login page reached from `authorizePath`; returns the consent page HTML. */
export async function logInAndReachConsent(
  browser: Browser,
  authorizePath: string,
  email: string,
  password: string,
): Promise<string> {
  const login = await browser.get(authorizePath);
  const loginHtml = await login.text();
  if (login.status !== 200 || !loginHtml.includes('action="/auth/sign_in"'))
    throw new Error(`expected the login page, got ${login.status}`);
  const signIn = await browser.post('/auth/sign_in', { ...hiddenFields(loginHtml), email, password });
  if (signIn.status !== 303) throw new Error(`log-in failed: ${signIn.status}`);
  const consent = await browser.get(signIn.headers.get('location') as string);
  const html = await consent.text();
  if (consent.status !== 200 || !html.includes('name="decision"'))
    throw new Error(`expected the consent page, got ${consent.status}`);
  return html;
}

/** Approves on a consent page; returns the redirect location. */
export async function approve(browser: Browser, consentHtml: string): Promise<string> {
  const res = await browser.post('/oauth/authorize', { ...hiddenFields(consentHtml), decision: 'approve' });
  if (res.status !== 302) throw new Error(`approval failed: ${res.status} ${await res.text()}`);
  return res.headers.get('location') as string;
}

/** The whole code flow for a user: app token with PKCE through the real pages. */
export async function userTokenThroughBrowser(
  base: string,
  user: { email: string; password: string },
  scope = 'read write',
): Promise<{ token: string; app: RegisteredApp }> {
  const redirectUri = 'https://client.example/callback';
  const app = await registerApp(base, redirectUri, scope);
  const { verifier, challenge } = pkcePair();
  const browser = new Browser(base);
  const consent = await logInAndReachConsent(
    browser,
    authorizeUrl(app, { redirectUri, scope, state: 's1', challenge }),
    user.email,
    user.password,
  );
  const location = new URL(await approve(browser, consent));
  const code = location.searchParams.get('code') as string;
  const res = await fetch(`${base}/oauth/token`, {
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
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${await res.text()}`);
  return { token: ((await res.json()) as { access_token: string }).access_token, app };
}
