// External log-in through OpenID Connect on Mastodon's omniauth paths: /auth/auth/openid_connect
// sends the browser to the provider (GET from the log-in page's link, or POST from a form), and
// /auth/auth/openid_connect/callback (OIDC_REDIRECT_URI) comes back with the code. The flow's id
// rides in an httpOnly cookie; core/auth/oidc.ts talks to the provider, core/users/externalLogin.ts
// finds or makes the user. As in Mastodon, the provider stands for the second factor.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { finishOidcLogin, OidcError, OIDC_PROVIDER, startOidcLogin } from '../../core/auth/oidc.ts';
import { ExternalLoginError, userForExternalLogin } from '../../core/users/externalLogin.ts';
import { loginRefusal } from '../../core/users/login.ts';
import { translator } from '../i18n.ts';
import { formField, queryField } from '../forms.ts';
import { messagePage, refusalMessage, safeReturnTo } from '../pages.ts';
import { sessionUser, startSession } from '../session.ts';

const t = translator('en');
const FLOW_COOKIE = '_oidc_flow';

const omniauthPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const settings = core.config.oidc;
  if (!settings) return;
  const provider = settings.displayName;

  const failed = (reply: FastifyReply, status: number, reason: string) =>
    messagePage(reply, core, {
      status,
      title: 'omniauth.failed_title',
      lines: [reason],
      link: { href: '/auth/sign_in?logged_out=1', label: 'auth.login' },
    });

  async function start(request: FastifyRequest, reply: FastifyReply, returnTo: string): Promise<FastifyReply> {
    try {
      const { url, flowId } = await startOidcLogin(core, settings!, safeReturnTo(returnTo));
      reply.setCookie(FLOW_COOKIE, flowId, {
        httpOnly: true,
        secure: core.config.localHttps,
        // Lax: the provider's redirect back is a top-level GET that must carry it.
        sameSite: 'lax',
        path: '/auth/auth',
        maxAge: 600,
      });
      return reply.redirect(url, 303);
    } catch (err) {
      request.log.warn({ err }, 'OpenID Connect provider unreachable');
      return failed(reply, 502, t('omniauth.failed', { provider, reason: 'Provider unavailable' }));
    }
  }

  app.get('/auth/auth/openid_connect', async (request, reply) =>
    start(request, reply, queryField(request, 'return_to', 4000)),
  );
  app.post('/auth/auth/openid_connect', { preHandler: app.csrfProtection }, async (request, reply) =>
    start(request, reply, formField(request, 'return_to', 4000)),
  );

  app.get('/auth/auth/openid_connect/callback', async (request, reply) => {
    const flowId = request.cookies[FLOW_COOKIE] ?? '';
    reply.clearCookie(FLOW_COOKIE, {
      path: '/auth/auth',
      secure: core.config.localHttps,
      httpOnly: true,
      sameSite: 'lax',
    });
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    let finished;
    try {
      finished = await finishOidcLogin(core, settings, flowId.slice(0, 100), query.slice(0, 8000));
    } catch (err) {
      if (!(err instanceof OidcError)) throw err;
      request.log.info({ reason: err.message }, 'external log-in refused');
      return failed(reply, 401, t('omniauth.failed', { provider, reason: err.message }));
    }
    try {
      const { user } = await userForExternalLogin(core, {
        provider: OIDC_PROVIDER,
        uidField: settings.uidField,
        assumeEmailIsVerified: settings.assumeEmailIsVerified,
        claims: finished.claims,
        signedIn: await sessionUser(core, request),
      });
      const refusal = await loginRefusal(core, user);
      if (refusal) return failed(reply, 403, refusalMessage(t, refusal));
      await startSession(core, request, reply, user);
      return reply.redirect(finished.returnTo, 303);
    } catch (err) {
      if (!(err instanceof ExternalLoginError)) throw err;
      const reason =
        err.problem === 'registrations_closed'
          ? t('omniauth.registrations_closed', { provider })
          : err.problem === 'missing_email'
            ? t('omniauth.missing_email', { provider })
            : err.problem === 'email_taken'
              ? t('omniauth.email_taken', { provider })
              : t('omniauth.failed', { provider, reason: 'Invalid credentials' });
      return failed(reply, 403, reason);
    }
  });
};

export default omniauthPages;
