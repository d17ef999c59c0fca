// Log-in (Devise's sessions in Mastodon) with its second step (a TOTP or recovery code, or a
// security key) and log-out. Attempts are throttled per IP and per account as Mastodon's
// throttle_login_attempts; the work is done by core operations shared with the API.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { translator } from '../i18n.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { findUser } from '../../core/users/queries.ts';
import type { Id } from '../../core/ids.ts';
import { hashSecret } from '../../core/auth/tokens.ts';
import { RATE_LIMITS, throttleableIp } from '../../core/rateLimit.ts';
import { logIn, loginRefusal } from '../../core/users/login.ts';
import { twoFactorEnabled, verifySecondFactor } from '../../core/users/twoFactor.ts';
import { hasSecurityKeys, securityKeyAuthenticationOptions, verifySecurityKey } from '../../core/users/securityKeys.ts';
import { page } from '../view.ts';
import { WEBAUTHN_CSP } from '../csp.ts';
import { endSession, sessionUser, startSession } from '../session.ts';
import { formField, queryField } from '../forms.ts';
import { DEFAULT_RETURN, refusalMessage, safeReturnTo, signInPage } from '../pages.ts';
import { currentSignInAttempt, endSignInAttempt, startSignInAttempt } from '../signInAttempt.ts';
import { rateLimited } from '../rateLimited.ts';

const t = translator('en');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const signInPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  // --- log-in and log-out ---------------------------------------------------------------------

  app.get('/auth/sign_in', async (request, reply) => {
    const user = await sessionUser(core, request);
    const returnTo = safeReturnTo(queryField(request, 'return_to', 4000) || undefined);
    // Already signed in: straight on (Devise's already_authenticated).
    if (user) return reply.redirect(returnTo, 303);
    return signInPage(reply, core, {
      returnTo,
      notice: queryField(request, 'logged_out') === '1' ? t('auth.logged_out') : undefined,
    });
  });

  async function twoFactorPage(reply: FastifyReply, userId: Id, status = 200, error?: string) {
    const securityKeys = await hasSecurityKeys(core, userId);
    if (securityKeys) reply.header('content-security-policy', WEBAUTHN_CSP);
    return page(reply, {
      status,
      template: 'auth/two_factor',
      title: 'two_factor.login_title',
      instance,
      csrf: reply.generateCsrf(),
      data: { error: error ?? null, securityKeys },
    });
  }

  // The challenge for a security key, for the log-in half-way through (Mastodon's path).
  app.get('/auth/sessions/security_key_options', async (request, reply) => {
    const attempt = await currentSignInAttempt(core, request);
    if (!attempt) return reply.code(401).send({ error: t('two_factor.expired') });
    return securityKeyAuthenticationOptions(core, attempt.userId);
  });

  app.post('/auth/sign_in', form, async (request, reply) => {
    const email = formField(request, 'email', 1000);
    const attempt = await currentSignInAttempt(core, request);
    const credential = formField(request, 'credential', 20_000);
    const secondStep =
      formField(request, 'otp_attempt', 100) !== '' || credential !== '' || (attempt !== null && email === '');
    // Mastodon's throttle_login_attempts: per IP, and per account (the one half logged in to, or
    // the address typed).
    if (await rateLimited(core, reply, RATE_LIMITS.loginPerIp, throttleableIp(request.ip))) return reply;
    const accountKey =
      secondStep && attempt ? `user:${attempt.userId}` : `email:${hashSecret(email.trim().toLowerCase())}`;
    if (await rateLimited(core, reply, RATE_LIMITS.loginPerAccount, accountKey)) return reply;

    if (secondStep) {
      if (!attempt)
        return signInPage(reply, core, { status: 401, returnTo: DEFAULT_RETURN, error: t('two_factor.expired') });
      const user = await findUser(core, attempt.userId);
      const passed =
        user !== null &&
        (credential
          ? await verifySecurityKey(core, user, parseJson(credential))
          : await verifySecondFactor(core, user, formField(request, 'otp_attempt', 100)));
      if (!user || !passed)
        return twoFactorPage(
          reply,
          attempt.userId,
          401,
          t(credential ? 'security_keys.errors.invalid' : 'two_factor.invalid_code'),
        );
      await endSignInAttempt(core, request, reply);
      return finishSignIn(request, reply, user, attempt.returnTo);
    }

    const password = formField(request, 'password', 1000);
    const returnTo = safeReturnTo(formField(request, 'return_to', 4000));
    if (core.config.omniauthOnly)
      return signInPage(reply, core, { status: 403, returnTo, email, error: t('omniauth.password_disabled') });
    const result = await logIn(core, email, password);
    if (!result.ok) {
      const throttled = result.reason === 'throttled';
      if (throttled) reply.header('retry-after', '900');
      return signInPage(reply, core, {
        status: throttled ? 429 : 401,
        returnTo,
        email,
        error: t(throttled ? 'auth.throttled' : 'auth.invalid'),
      });
    }
    if (twoFactorEnabled(result.user)) {
      await startSignInAttempt(core, reply, { userId: result.user._id, returnTo });
      return twoFactorPage(reply, result.user._id);
    }
    return finishSignIn(request, reply, result.user, returnTo, email);
  });

  async function finishSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserDoc,
    returnTo: string,
    email = '',
  ): Promise<FastifyReply> {
    // Mastodon's messages for a login that exists but may not be used (yet).
    const refusal = await loginRefusal(core, user);
    if (refusal) return signInPage(reply, core, { status: 403, returnTo, email, error: refusalMessage(t, refusal) });
    await startSession(core, request, reply, user);
    return reply.redirect(returnTo, 303);
  }

  app.post('/auth/sign_out', form, async (request, reply) => {
    await endSession(core, request, reply);
    return reply.redirect('/auth/sign_in?logged_out=1', 303);
  });
};

export default signInPages;
