// OAuth area: the token, revoke and userinfo endpoints and the authorization-server metadata. The
// browser pages of the flow (log-in, consent, out-of-band code) are in services/web/oauth.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { SCOPES_SUPPORTED } from '../../core/auth/scopes.ts';
import { findAppByClientId, clientSecretMatches } from '../../core/oauth/apps.ts';
import { appIdOfToken, revokeAccessToken } from '../../core/oauth/tokens.ts';
import { localBase } from '../../core/accounts/urls.ts';
import { presentAccount } from '../../core/entities/account.ts';
import { createTokenEndpoint } from './tokenEndpoint.ts';

const oauthArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const tokenEndpoint = createTokenEndpoint(core);

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
    const appId = await appIdOfToken(core, token);
    if (appId !== null && appId !== client._id) {
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
