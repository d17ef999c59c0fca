// Validation of an authorization request (GET and POST /oauth/authorize), with RFC 6749's split:
// an unknown client or redirect URI gets an error page (never a redirect); anything else wrong is
// reported to the client through its redirect URI.
import type { Core } from '../context.ts';
import type { AppDoc } from '../model/oauth.ts';
import { findAppByClientId, OOB_REDIRECT_URI } from './apps.ts';
import { isKnownScope, parseScopes, scopesWithin } from '../auth/scopes.ts';

export interface AuthorizeParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  force_login?: string;
  lang?: string;
}

export type AuthorizeCheck =
  | { kind: 'page'; status: number; message: string }
  | { kind: 'redirect'; location: string }
  | {
      kind: 'ok';
      app: AppDoc;
      redirectUri: string;
      scopes: string[];
      state: string | null;
      codeChallenge: string | null;
    };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function authorizeParams(source: Record<string, unknown>): AuthorizeParams {
  return {
    response_type: str(source.response_type),
    client_id: str(source.client_id),
    redirect_uri: str(source.redirect_uri),
    scope: str(source.scope) ?? str(source.scopes),
    state: str(source.state),
    code_challenge: str(source.code_challenge),
    code_challenge_method: str(source.code_challenge_method),
    force_login: str(source.force_login),
    lang: str(source.lang),
  };
}

/** The parameters to carry from page to page (hidden form fields), without empty ones. */
export function carriedParams(p: AuthorizeParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [
    'response_type',
    'client_id',
    'redirect_uri',
    'scope',
    'state',
    'code_challenge',
    'code_challenge_method',
    'lang',
  ] as const) {
    const v = p[k];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out;
}

/** A redirect to the client with the given query parameters (state added when present). */
export function clientRedirect(
  redirectUri: string,
  params: Record<string, string>,
  state: string | null | undefined,
): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state) url.searchParams.set('state', state);
  return url.toString();
}

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export async function checkAuthorizeRequest(core: Core, p: AuthorizeParams): Promise<AuthorizeCheck> {
  const app = p.client_id ? await findAppByClientId(core, p.client_id) : null;
  if (!app)
    return {
      kind: 'page',
      status: 401,
      message:
        'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
    };
  // Mastodon's apps usually have one redirect URI, which is then the default.
  const redirectUri = p.redirect_uri || (app.redirectUris.length === 1 ? app.redirectUris[0] : '');
  if (!redirectUri || !app.redirectUris.includes(redirectUri)) {
    return { kind: 'page', status: 400, message: 'The redirect uri included is not valid.' };
  }
  const state = p.state ?? null;
  const fail = (error: string, description: string): AuthorizeCheck =>
    redirectUri === OOB_REDIRECT_URI
      ? { kind: 'page', status: 400, message: description }
      : { kind: 'redirect', location: clientRedirect(redirectUri, { error, error_description: description }, state) };
  if (p.response_type !== 'code') {
    return fail('unsupported_response_type', 'The authorization server does not support this response type.');
  }
  const scopes = parseScopes(p.scope);
  if (!scopes.every(isKnownScope) || !scopesWithin(scopes, app.scopes)) {
    return fail('invalid_scope', 'The requested scope is invalid, unknown, or malformed.');
  }
  let codeChallenge: string | null = null;
  if (p.code_challenge !== undefined && p.code_challenge !== '') {
    // Only S256: the plain method would put the verifier itself in the browser's history.
    if (p.code_challenge_method !== 'S256') return fail('invalid_request', 'Code challenge method must be S256.');
    if (!S256_CHALLENGE.test(p.code_challenge)) return fail('invalid_request', 'The code challenge is malformed.');
    codeChallenge = p.code_challenge;
  } else if (p.code_challenge_method) {
    return fail('invalid_request', 'The code challenge is missing.');
  }
  return { kind: 'ok', app, redirectUri, scopes, state, codeChallenge };
}
