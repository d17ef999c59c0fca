// The OAuth authorization pages every app sends people to: GET /oauth/authorize (the log-in form
// when nobody is signed in, else the consent page), POST /oauth/authorize (approve or deny), the
// out-of-band code page and the landing page after a log-in started outside an app. The token,
// revoke and userinfo endpoints stay in services/api/oauth.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { findAccount } from '../../core/accounts/queries.ts';
import { DANGEROUS_SCOPES } from '../../core/auth/scopes.ts';
import { OOB_REDIRECT_URI } from '../../core/oauth/apps.ts';
import { createAuthorizationCode } from '../../core/oauth/codes.ts';
import { loginRefusal, type LoginRefusal } from '../../core/users/login.ts';
import { twoFactorSetupRequired } from '../../core/users/twoFactor.ts';
import { TWO_FACTOR_METHODS } from '../guard.ts';
import {
  authorizeParams,
  carriedParams,
  checkAuthorizeRequest,
  clientRedirect,
  type AuthorizeCheck,
} from '../../core/oauth/authorizeRequest.ts';
import { translator, type Translate } from '../i18n.ts';
import { page } from '../view.ts';
import { endSession, sessionUser } from '../session.ts';
import { queryField } from '../forms.ts';
import { messagePage, pageLang, signInPage, refusalMessage } from '../pages.ts';

function truthy(value: unknown): boolean {
  return typeof value === 'string' && value !== '' && !/^(0|f|false|off|no)$/i.test(value);
}

function describeScope(t: Translate, scope: string): string {
  const text = t(`oauth.scopes.${scope}`);
  if (!text.startsWith('[missing')) return text;
  const m = /^admin:(read|write):(.+)$/.exec(scope);
  if (m)
    return t(m[1] === 'read' ? 'oauth.scopes.admin_read_any' : 'oauth.scopes.admin_write_any', {
      resource: m[2].replace(/_/g, ' '),
    });
  return scope;
}

const oauthPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  /** A request that cannot be authorized: a page, or back to the client with the error. */
  function refuseRequest(
    reply: FastifyReply,
    check: Exclude<AuthorizeCheck, { kind: 'ok' }>,
    lang: string,
  ): Promise<FastifyReply> | FastifyReply {
    if (check.kind === 'redirect') return reply.redirect(check.location, 302);
    return messagePage(reply, core, { status: check.status, title: 'oauth.error_title', lines: [check.message], lang });
  }

  /** A signed-in user who may not authorize apps (disabled, unconfirmed, unapproved, ...). */
  function cannotAuthorize(reply: FastifyReply, refusal: LoginRefusal, lang: string) {
    return messagePage(reply, core, {
      status: 403,
      title: 'oauth.cannot_authorize',
      lines: [refusalMessage(translator(lang), refusal)],
      lang,
    });
  }

  async function showAuthorize(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const params = authorizeParams(request.query as Record<string, unknown>);
    const lang = pageLang(params.lang);
    const check = await checkAuthorizeRequest(core, params);
    if (check.kind !== 'ok') return refuseRequest(reply, check, lang);

    let user = await sessionUser(core, request);
    if (user && truthy(params.force_login)) {
      await endSession(core, request, reply);
      user = null;
    }
    if (!user) {
      const query = new URLSearchParams(carriedParams(params)).toString();
      return signInPage(reply, core, { returnTo: `/oauth/authorize?${query}`, lang });
    }
    const refusal = await loginRefusal(core, user);
    if (refusal) return cannotAuthorize(reply, refusal, lang);
    // A role that requires two-factor authentication: set it up first (Mastodon's require_functional!).
    if (await twoFactorSetupRequired(core, user)) return reply.redirect(TWO_FACTOR_METHODS, 303);
    const account = await findAccount(core, user.accountId);
    const t = translator(lang);
    const item = (scope: string) => ({ scope, description: describeScope(t, scope) });
    const website = check.app.website && /^https?:\/\//i.test(check.app.website) ? check.app.website : null;
    return page(reply, {
      template: 'oauth/consent',
      title: 'oauth.authorize_title',
      instance,
      lang,
      csrf: reply.generateCsrf(),
      signedInAs: account?.username ?? null,
      data: {
        appName: check.app.name,
        website,
        username: account?.username ?? '',
        normal: check.scopes.filter((s) => !DANGEROUS_SCOPES.has(s)).map(item),
        dangerous: check.scopes.filter((s) => DANGEROUS_SCOPES.has(s)).map(item),
        params: carriedParams({ ...params, scope: check.scopes.join(' '), redirect_uri: check.redirectUri }),
      },
    });
  }

  app.get('/oauth/authorize', showAuthorize);

  app.post('/oauth/authorize', { preHandler: app.csrfProtection }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = authorizeParams(body);
    const lang = pageLang(params.lang);
    const check = await checkAuthorizeRequest(core, params);
    if (check.kind !== 'ok') return refuseRequest(reply, check, lang);
    const user = await sessionUser(core, request);
    if (!user)
      return messagePage(reply, core, {
        status: 401,
        title: 'oauth.session_expired_title',
        lines: ['oauth.session_expired'],
        lang,
        translate: true,
      });
    const refusal = await loginRefusal(core, user);
    if (refusal) return cannotAuthorize(reply, refusal, lang);
    if (await twoFactorSetupRequired(core, user)) return reply.redirect(TWO_FACTOR_METHODS, 303);

    if (body.decision !== 'approve') {
      if (check.redirectUri === OOB_REDIRECT_URI)
        return messagePage(reply, core, {
          title: 'oauth.denied_title',
          lines: ['oauth.denied'],
          lang,
          translate: true,
        });
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

  app.get('/oauth/authorize/native', async (request, reply) => {
    const code = queryField(request, 'code', 200);
    if (!code)
      return messagePage(reply, core, {
        status: 400,
        title: 'oauth.error_title',
        lines: ['oauth.no_code'],
        translate: true,
      });
    return page(reply, { template: 'oauth/code', title: 'oauth.code_title', instance, data: { code } });
  });

  app.get('/oauth/authorize/signed_in', async (request, reply) => {
    const user = await sessionUser(core, request);
    return user
      ? messagePage(reply, core, { title: 'auth.signed_in_title', lines: ['auth.signed_in'], translate: true })
      : messagePage(reply, core, { title: 'auth.not_signed_in_title', lines: ['auth.not_signed_in'], translate: true });
  });
};

export default oauthPages;
