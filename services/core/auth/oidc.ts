// The relying party of external log-in through OpenID Connect (Mastodon's omniauth_openid_connect
// strategy, configured by its OIDC_* settings), with `openid-client`: the authorization-code flow
// with PKCE, state and nonce; the ID token checked by the library (issuer, audience, signature,
// nonce); the claims of the ID token and of the userinfo endpoint merged (userinfo wins).
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { Core } from '../context.ts';
import type { OidcConfig } from '../config.ts';
import { hashSecret } from './tokens.ts';

export const OIDC_PROVIDER = 'openid_connect';
/** How long a log-in at the provider may take. */
const FLOW_TTL_SECONDS = 10 * 60;

export type OidcClaims = Record<string, unknown>;

export class OidcError extends Error {}

// One configuration per process and provider settings: discovery runs once, and again after a failure.
const configurations = new WeakMap<OidcConfig, Promise<client.Configuration>>();

function configuration(settings: OidcConfig): Promise<client.Configuration> {
  let pending = configurations.get(settings);
  if (!pending) {
    pending = loadConfiguration(settings);
    pending.catch(() => configurations.delete(settings));
    configurations.set(settings, pending);
  }
  return pending;
}

async function loadConfiguration(settings: OidcConfig): Promise<client.Configuration> {
  // An http issuer is the operator's explicit choice (a provider on the same host or network).
  const insecure = new URL(settings.issuer).protocol === 'http:';
  let config: client.Configuration;
  if (settings.discovery) {
    config = await client.discovery(
      new URL(settings.issuer),
      settings.clientId,
      undefined,
      client.ClientSecretBasic(settings.clientSecret),
      insecure ? { execute: [client.allowInsecureRequests] } : undefined,
    );
  } else {
    const e = settings.endpoints!;
    config = new client.Configuration(
      {
        issuer: settings.issuer,
        authorization_endpoint: e.authorization,
        token_endpoint: e.token,
        userinfo_endpoint: e.userinfo ?? undefined,
        jwks_uri: e.jwks,
      },
      settings.clientId,
      undefined,
      client.ClientSecretBasic(settings.clientSecret),
    );
    if (insecure) client.allowInsecureRequests(config);
  }
  return config;
}

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

const flowKey = (id: string) => `oidc_flow:${hashSecret(id)}`;

/** Where to send the browser, and the id (for a cookie) that the callback must bring back. */
export async function startOidcLogin(
  core: Core,
  settings: OidcConfig,
  returnTo: string,
): Promise<{ url: string; flowId: string }> {
  const config = await configuration(settings);
  const flow: Flow = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    returnTo,
  };
  const flowId = randomBytes(24).toString('base64url');
  await core.redis.set(flowKey(flowId), JSON.stringify(flow), 'EX', FLOW_TTL_SECONDS);
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: settings.redirectUri,
    scope: settings.scope.join(' '),
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  return { url: url.href, flowId };
}

/**
 * Completes the flow of `flowId` with the provider's answer (the callback's query string); the
 * flow can be completed once. Throws OidcError with the reason when the answer is refused.
 */
export async function finishOidcLogin(
  core: Core,
  settings: OidcConfig,
  flowId: string,
  query: string,
): Promise<{ claims: OidcClaims; returnTo: string }> {
  const raw = flowId ? await core.redis.getdel(flowKey(flowId)) : null;
  if (!raw) throw new OidcError('Invalid credentials');
  const flow = JSON.parse(raw) as Flow;
  const config = await configuration(settings);
  // The URL as the provider was told it (a proxy in front may change the host we see).
  const current = new URL(settings.redirectUri);
  current.search = query;
  const providerError = current.searchParams.get('error');
  if (providerError) throw new OidcError(current.searchParams.get('error_description') ?? providerError);
  try {
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const idClaims: OidcClaims = { ...(tokens.claims() ?? {}) };
    const sub = typeof idClaims.sub === 'string' ? idClaims.sub : null;
    let userinfo: OidcClaims = {};
    if (config.serverMetadata().userinfo_endpoint && sub)
      userinfo = await client.fetchUserInfo(config, tokens.access_token, sub);
    return { claims: { ...idClaims, ...userinfo }, returnTo: flow.returnTo };
  } catch (err) {
    throw new OidcError(err instanceof Error ? err.message : 'Invalid credentials');
  }
}
