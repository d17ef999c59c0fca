// OAuth area: the browser pages (log-in, consent, out-of-band code), the token, revoke and
// userinfo endpoints, and the authorization-server metadata. Sessions live in a cookie-named Redis
// record; every form carries a CSRF token (@fastify/csrf-protection, secret in a signed cookie).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { collection } from '../../core/db/mongo.ts';
import { users, type UserDoc } from '../../core/model/users.ts';
import { accounts } from '../../core/model/accounts.ts';
import { SCOPES_SUPPORTED } from '../../core/auth/scopes.ts';
import { OOB_REDIRECT_URI, findAppByClientId, clientSecretMatches } from '../../core/oauth/apps.ts';
import { createAuthorizationCode } from '../../core/oauth/codes.ts';
import { revokeAccessToken } from '../../core/oauth/tokens.ts';
import { createWebSession, destroyWebSession, webSessionUser, SESSION_TTL_SECONDS } from '../../core/oauth/sessions.ts';
import { logIn } from '../../core/users/login.ts';
import { localBase } from '../../core/accounts/urls.ts';
import { presentAccount } from '../../core/entities/account.ts';
import { hashSecret } from '../../core/auth/tokens.ts';
import { accessTokens } from '../../core/model/oauth.ts';
import { authorizeParams, carriedParams, checkAuthorizeRequest, clientRedirect } from './authorize.ts';
import { codePage, consentPage, loginPage, messagePage } from './pages.ts';
import { createTokenEndpoint } from './tokenEndpoint.ts';

const SESSION_COOKIE = '_session_id';

function pageLang(value: unknown): string {
  return typeof value === 'string' && /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(value) ? value : 'en';
}

function truthy(value: unknown): boolean {
  return typeof value === 'string' && value !== '' && !/^(0|f|false|off|no)$/i.test(value);
}

/** Only our own authorize page may be returned to after log-in (no open redirect). */
function safeReturnTo(value: unknown): string {
  return typeof value === 'string' && /^\/oauth\/authorize(\?|$)/.test(value) && !value.includes('//')
    ? value
    : '/oauth/authorize/signed_in';
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return (
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY')
      // No form-action: browsers apply it to the redirect after a form, and apps use custom schemes.
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .send(body)
  );
}

async function sessionUser(core: Core, request: FastifyRequest): Promise<UserDoc | null> {
  const userId = await webSessionUser(core, request.cookies[SESSION_COOKIE]);
  return userId === null ? null : collection(core.db, users).findOne({ _id: userId });
}

/** Why a logged-in user cannot authorize apps, as a page message; null when they can. */
function loginProblem(user: UserDoc): string | null {
  if (user.disabled) return 'Your login is currently disabled.';
  if (!user.confirmedAt)
    return 'Your login is missing a confirmed e-mail address. Please follow the link in the e-mail we sent you.';
  if (!user.approved) return 'Your account is currently pending approval by an administrator.';
  return null;
}

const oauthArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const secure = core.config.localHttps;
  await app.register(cookie, { secret: core.config.secretKeyBase });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: '_csrf_secret',
    cookieOpts: { signed: true, httpOnly: true, sameSite: 'lax', secure, path: '/' },
  });
  const instance = core.config.localDomain;
  const tokenEndpoint = createTokenEndpoint(core);
  const form = { preHandler: app.csrfProtection };

  async function showAuthorize(
    request: FastifyRequest,
    reply: FastifyReply,
    source: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const params = authorizeParams(source);
    const lang = pageLang(params.lang);
    const check = await checkAuthorizeRequest(core, params);
    if (check.kind === 'page')
      return html(reply, check.status, messagePage('An error has occurred', check.message, lang));
    if (check.kind === 'redirect') return reply.redirect(check.location, 302);

    let user = await sessionUser(core, request);
    if (user && truthy(params.force_login)) {
      await destroyWebSession(core, request.cookies[SESSION_COOKIE]);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      user = null;
    }
    if (!user) {
      const query = new URLSearchParams(carriedParams(params)).toString();
      return html(
        reply,
        200,
        loginPage({ csrf: reply.generateCsrf(), returnTo: `/oauth/authorize?${query}`, instance, lang }),
      );
    }
    const problem = loginProblem(user);
    if (problem) return html(reply, 403, messagePage('Cannot authorize', problem, lang));
    const account = await collection(core.db, accounts).findOne({ _id: user.accountId });
    return html(
      reply,
      200,
      consentPage({
        csrf: reply.generateCsrf(),
        appName: check.app.name,
        website: check.app.website,
        username: account?.username ?? '',
        scopes: check.scopes,
        params: carriedParams({ ...params, scope: check.scopes.join(' '), redirect_uri: check.redirectUri }),
        instance,
        lang,
      }),
    );
  }

  app.get('/oauth/authorize', async (request, reply) =>
    showAuthorize(request, reply, request.query as Record<string, unknown>),
  );

  app.post('/oauth/authorize', form, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = authorizeParams(body);
    const lang = pageLang(params.lang);
    const check = await checkAuthorizeRequest(core, params);
    if (check.kind === 'page')
      return html(reply, check.status, messagePage('An error has occurred', check.message, lang));
    if (check.kind === 'redirect') return reply.redirect(check.location, 302);
    const user = await sessionUser(core, request);
    if (!user)
      return html(reply, 401, messagePage('Session expired', 'Please start again from the application.', lang));
    const problem = loginProblem(user);
    if (problem) return html(reply, 403, messagePage('Cannot authorize', problem, lang));

    if (body.decision !== 'approve') {
      if (check.redirectUri === OOB_REDIRECT_URI)
        return html(
          reply,
          200,
          messagePage('Authorization denied', 'You denied the application access to your account.', lang),
        );
      return reply.redirect(
        clientRedirect(
          check.redirectUri,
          {
            error: 'access_denied',
            error_description: 'The resource owner or authorization server denied the request.',
          },
          check.state,
        ),
        302,
      );
    }
    const code = await createAuthorizationCode(core, {
      appId: check.app._id,
      userId: user._id,
      redirectUri: check.redirectUri,
      scopes: check.scopes,
      codeChallenge: check.codeChallenge,
    });
    if (check.redirectUri === OOB_REDIRECT_URI)
      return reply.redirect(`/oauth/authorize/native?code=${encodeURIComponent(code)}`, 302);
    return reply.redirect(clientRedirect(check.redirectUri, { code }, check.state), 302);
  });

  app.get(
    '/oauth/authorize/native',
    { schema: { querystring: Type.Object({ code: Type.Optional(Type.String({ maxLength: 200 })) }) } },
    async (request, reply) => {
      const code = request.query.code;
      if (!code) return html(reply, 400, messagePage('An error has occurred', 'No authorization code was given.'));
      return html(reply, 200, codePage(code, instance));
    },
  );

  app.get('/oauth/authorize/signed_in', async (request, reply) => {
    const user = await sessionUser(core, request);
    return html(
      reply,
      200,
      messagePage(
        user ? 'Logged in' : 'Not logged in',
        user ? 'You are logged in. Return to your application.' : 'Start from your application to log in.',
      ),
    );
  });

  app.get('/auth/sign_in', async (request, reply) =>
    html(
      reply,
      200,
      loginPage({
        csrf: reply.generateCsrf(),
        returnTo: safeReturnTo((request.query as Record<string, unknown>).return_to),
        instance,
        lang: 'en',
      }),
    ),
  );

  app.post('/auth/sign_in', form, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const returnTo = safeReturnTo(body.return_to);
    const result = await logIn(core, email, password);
    if (!result.ok) {
      const error =
        result.reason === 'throttled'
          ? 'Too many failed attempts. Try again later.'
          : 'Invalid E-mail address or password.';
      return html(
        reply,
        result.reason === 'throttled' ? 429 : 401,
        loginPage({ csrf: reply.generateCsrf(), returnTo, error, email, instance, lang: 'en' }),
      );
    }
    // A fresh session id at every log-in (no session fixation).
    await destroyWebSession(core, request.cookies[SESSION_COOKIE]);
    const sessionId = await createWebSession(core, result.user._id);
    reply.setCookie(SESSION_COOKIE, sessionId, {
      httpOnly: true,
      secure,
      sameSite: 'lax',
      path: '/',
      maxAge: SESSION_TTL_SECONDS,
    });
    return reply.redirect(returnTo, 303);
  });

  app.post('/auth/sign_out', form, async (request, reply) => {
    await destroyWebSession(core, request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return html(reply, 200, messagePage('Logged out', 'You are logged out.'));
  });

  app.post('/oauth/token', async (request, reply) => {
    const result = await tokenEndpoint({
      headers: request.headers,
      body: (request.body ?? {}) as Record<string, unknown>,
    });
    reply.headers({ ...result.headers, 'cache-control': 'no-store', pragma: 'no-cache' });
    return reply.code(result.status).send(result.body);
  });

  app.post('/oauth/revoke', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    let clientId = typeof body.client_id === 'string' ? body.client_id : '';
    let clientSecret = typeof body.client_secret === 'string' ? body.client_secret : '';
    const basic = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      if (i > 0)
        [clientId, clientSecret] = [decodeURIComponent(decoded.slice(0, i)), decodeURIComponent(decoded.slice(i + 1))];
    }
    const token = typeof body.token === 'string' ? body.token : '';
    if (!token)
      return reply.code(400).send({ error: 'invalid_request', error_description: 'Missing parameter: token' });
    const client = clientId ? await findAppByClientId(core, clientId) : null;
    if (!client || !clientSecret || !clientSecretMatches(client, clientSecret)) {
      return reply.code(401).send({
        error: 'invalid_client',
        error_description:
          'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
      });
    }
    const doc = await collection(core.db, accessTokens).findOne(
      { tokenHash: hashSecret(token) },
      { projection: { appId: 1 } },
    );
    if (doc && doc.appId !== client._id) {
      return reply
        .code(403)
        .send({ error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' });
    }
    await revokeAccessToken(core, client._id, token);
    return {};
  });

  const UserInfo = Type.Object({
    iss: Type.String(),
    sub: Type.String(),
    name: Type.String(),
    preferred_username: Type.String(),
    profile: Type.String(),
    picture: Type.String(),
  });
  const userinfo = async (request: FastifyRequest) => {
    const account = request.auth!.account!;
    const entity = await presentAccount(core, account);
    return {
      iss: `${localBase(core.config)}/`,
      sub: account.uri,
      name: account.displayName || account.username,
      preferred_username: account.username,
      profile: account.url,
      picture: entity.avatar,
    };
  };
  const userinfoOpts = {
    schema: { response: { 200: UserInfo } },
    config: { auth: { scopes: ['profile', 'read:accounts'], user: 'required' as const } },
  };
  app.get('/oauth/userinfo', userinfoOpts, userinfo);
  app.post('/oauth/userinfo', userinfoOpts, userinfo);

  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    const base = core.config.baseUrl;
    reply.header('cache-control', 'public, max-age=900');
    return {
      issuer: `${localBase(core.config)}/`,
      service_documentation: 'https://docs.joinmastodon.org/',
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      scopes_supported: [...SCOPES_SUPPORTED],
      response_types_supported: ['code'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      app_registration_endpoint: `${base}/api/v1/apps`,
    };
  });
};

export default oauthArea;
