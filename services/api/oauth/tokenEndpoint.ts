// POST /oauth/token through @node-oauth/oauth2-server: it parses the grant request, authenticates
// the client (body or HTTP Basic), checks the code, the redirect URI and PKCE (S256 only); our model
// below binds it to our apps, codes and tokens. Grants: authorization_code and client_credentials,
// as Mastodon 4.4 (no password grant, no refresh tokens, tokens do not expire).
import OAuth2Server from '@node-oauth/oauth2-server';
import type { Core } from '../../core/context.ts';
import { findAppByClientId, clientSecretMatches } from '../../core/oauth/apps.ts';
import {
  findAuthorizationCode,
  consumeAuthorizationCode,
  handleCodeReplay,
  recordIssuedToken,
} from '../../core/oauth/codes.ts';
import { issueAccessToken } from '../../core/oauth/tokens.ts';
import { parseScopes, scopesWithin } from '../../core/auth/scopes.ts';
import type { AppDoc } from '../../core/model/oauth.ts';
import type { Id } from '../../core/ids.ts';

const { Request, Response, OAuthError } = OAuth2Server;

interface OurClient extends OAuth2Server.Client {
  app: AppDoc;
}

/** The "user" of an app-only grant (client credentials). */
interface GrantUser {
  userId: Id | null;
}

export interface TokenResult {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function scopeList(scope: string[] | string | undefined): string[] | undefined {
  if (scope === undefined) return undefined;
  return Array.isArray(scope) ? scope : parseScopes(scope);
}

function buildModel(core: Core): OAuth2Server.AuthorizationCodeModel & OAuth2Server.ClientCredentialsModel {
  return {
    async getClient(clientId, clientSecret) {
      const app = await findAppByClientId(core, clientId);
      if (!app) return null;
      // A secret, when sent, must match; without one only a PKCE code exchange gets this far.
      if (clientSecret && !clientSecretMatches(app, clientSecret)) return null;
      const client: OurClient = {
        id: String(app._id),
        grants: ['authorization_code', 'client_credentials'],
        redirectUris: app.redirectUris,
        app,
      };
      return client;
    },

    async getAuthorizationCode(code) {
      const doc = await findAuthorizationCode(core, code);
      if (!doc) return null;
      if (doc.usedAt) {
        await handleCodeReplay(core, doc);
        return null;
      }
      const user: GrantUser = { userId: doc.userId };
      return {
        authorizationCode: code,
        expiresAt: doc.expiresAt,
        redirectUri: doc.redirectUri,
        scope: doc.scopes,
        client: { id: String(doc.appId), grants: [] },
        user,
        codeChallenge: doc.codeChallenge ?? undefined,
        codeChallengeMethod: doc.codeChallengeMethod ?? undefined,
        codeId: doc._id,
      };
    },

    async revokeAuthorizationCode(code) {
      return consumeAuthorizationCode(core, (code as unknown as { codeId: Id }).codeId);
    },

    async saveAuthorizationCode() {
      // Codes are made by our own consent page (core/oauth/codes.ts), never by the library.
      return null;
    },

    async getUserFromClient() {
      const user: GrantUser = { userId: null };
      return user;
    },

    async validateScope(user, client, scope) {
      const app = (client as OurClient).app;
      // Code grants carry the scopes the user approved; app grants default to `read` like Mastodon.
      const requested = scopeList(scope) ?? ['read'];
      if (!app || requested.length === 0) return requested;
      return scopesWithin(requested, app.scopes) ? requested : null;
    },

    async saveToken(token, client, user) {
      const app = (client as OurClient).app;
      const scopes = scopeList(token.scope) ?? ['read'];
      const issued = await issueAccessToken(core, { appId: app._id, userId: (user as GrantUser).userId, scopes });
      if (token.authorizationCode) {
        const code = await findAuthorizationCode(core, token.authorizationCode);
        if (code) await recordIssuedToken(core, code._id, issued.doc._id);
      }
      return {
        accessToken: issued.token,
        client,
        user,
        scope: issued.doc.scopes,
        created_at: Math.floor(issued.doc.createdAt.getTime() / 1000),
      };
    },

    async getAccessToken() {
      // Bearer tokens are checked by the API's auth plugin, not through the library.
      return null;
    },
  };
}

const GRANT_TYPES = new Set(['authorization_code', 'client_credentials']);

export function createTokenEndpoint(
  core: Core,
): (input: {
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}) => Promise<TokenResult> {
  const server = new OAuth2Server({
    model: buildModel(core),
    // Required by the library; our saveToken returns no expiry, so no `expires_in` is sent.
    accessTokenLifetime: 100 * 365 * 24 * 3600,
    refreshTokenLifetime: 1,
    allowExtendedTokenAttributes: true,
    requireClientAuthentication: { authorization_code: true, client_credentials: true },
  });

  return async ({ headers, body }) => {
    const grantType = typeof body.grant_type === 'string' ? body.grant_type : '';
    if (grantType && !GRANT_TYPES.has(grantType)) {
      return {
        status: 400,
        headers: {},
        body: {
          error: 'unsupported_grant_type',
          error_description: 'The authorization grant type is not supported by the authorization server.',
        },
      };
    }
    // Our params plugin already parsed JSON, form and multipart bodies: present them as a form.
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(body)) if (typeof v === 'string') flat[k] = v;
    const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
    const request = new Request({
      method: 'POST',
      query: {},
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '1',
        ...(authorization ? { authorization } : {}),
      },
      body: flat,
    });
    const response = new Response({ headers: {} });
    try {
      await server.token(request, response);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      const status = err.name === 'invalid_client' ? 401 : (err.code ?? 400);
      if (status >= 500) throw err;
      // RFC 6749 §5.2 (and Doorkeeper): a redirect URI that differs from the authorization request's is invalid_grant.
      const error = err.name === 'invalid_request' && /redirect_uri/.test(err.message) ? 'invalid_grant' : err.name;
      return {
        status,
        headers: (response.headers ?? {}) as Record<string, string>,
        body: { error, error_description: err.message },
      };
    }
    return {
      status: 200,
      headers: (response.headers ?? {}) as Record<string, string>,
      body: (response.body ?? {}) as Record<string, unknown>,
    };
  };
}
