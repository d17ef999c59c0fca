// The account pages of Devise's routes in Mastodon: log-in and log-out, sign-up, the e-mail
// confirmation link, password reset, and the account page (password and e-mail changes). Every
// form carries a CSRF token; the work is done by core operations shared with the API.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { collection } from '../../core/db/mongo.ts';
import { accounts } from '../../core/model/accounts.ts';
import { hashSecret } from '../../core/auth/tokens.ts';
import { hitRateLimit, throttleableIp } from '../../core/rateLimit.ts';
import { logIn, loginRefusal } from '../../core/users/login.ts';
import { registerUser, RegistrationsClosedError } from '../../core/accounts/registration.ts';
import { AccountValidationError } from '../../core/accounts/create.ts';
import { getRegistrationsMode } from '../../core/settings/settings.ts';
import { getInstanceSettings } from '../../core/instance/settings.ts';
import { listRules } from '../../core/instance/rules.ts';
import { confirmByToken, resendConfirmationByEmail } from '../../core/users/confirmation.ts';
import { checkResetToken, requestPasswordReset, resetPassword } from '../../core/users/passwordReset.ts';
import { changeEmail, changePassword, CredentialError } from '../../core/users/credentials.ts';
import { browserRedirectUri, findAppById } from '../../core/oauth/apps.ts';
import { RATE_LIMITS } from '../../core/rateLimit.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { formatDate } from '../format.ts';
import { endSession, sessionId, sessionUser, startSession } from '../session.ts';
import { formCheckbox, formField, queryField } from '../forms.ts';
import { DEFAULT_RETURN, messagePage, refusalMessage, safeReturnTo, signInPage } from '../pages.ts';
import { currentSignInAttempt, endSignInAttempt, startSignInAttempt } from '../signInAttempt.ts';
import { twoFactorEnabled, verifySecondFactor } from '../../core/users/twoFactor.ts';
import { users } from '../../core/model/users.ts';
import type { Id } from '../../core/ids.ts';
import { hasSecurityKeys, securityKeyAuthenticationOptions, verifySecurityKey } from '../../core/users/securityKeys.ts';
import { WEBAUTHN_CSP } from '../csp.ts';
import { requireSignedIn } from '../guard.ts';
import { describeUserAgent } from '../userAgent.ts';
import {
  destroyUserWebSessions,
  destroyWebSessionById,
  listWebSessions,
  webSessionPublicId,
} from '../../core/oauth/sessions.ts';

const t = translator('en');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The user's language at sign-up: the browser's first Accept-Language tag, as Mastodon takes it. */
function requestLocale(request: FastifyRequest): string {
  const header = request.headers['accept-language'];
  const first = typeof header === 'string' ? header.split(',')[0].split(';')[0].trim() : '';
  return /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(first) ? first : 'en';
}

/** Sanitised HTML from the admin is shown as text here: tags dropped, entities kept as typed. */
function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const authPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  async function limited(
    reply: FastifyReply,
    rule: (typeof RATE_LIMITS)[keyof typeof RATE_LIMITS],
    subject: string,
  ): Promise<boolean> {
    const verdict = await hitRateLimit(core.redis, rule, subject);
    if (verdict.allowed) return false;
    reply.header('retry-after', String(Math.max(1, Math.ceil((verdict.resetAt.getTime() - Date.now()) / 1000))));
    await messagePage(reply, core, {
      status: 429,
      title: 'errors.title',
      lines: ['auth.too_many_requests'],
      translate: true,
    });
    return true;
  }

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
    if (await limited(reply, RATE_LIMITS.loginPerIp, throttleableIp(request.ip))) return reply;
    const accountKey =
      secondStep && attempt ? `user:${attempt.userId}` : `email:${hashSecret(email.trim().toLowerCase())}`;
    if (await limited(reply, RATE_LIMITS.loginPerAccount, accountKey)) return reply;

    if (secondStep) {
      if (!attempt)
        return signInPage(reply, core, { status: 401, returnTo: DEFAULT_RETURN, error: t('two_factor.expired') });
      const user = await collection(core.db, users).findOne({ _id: attempt.userId });
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

  // --- sign-up --------------------------------------------------------------------------------

  interface SignUpForm {
    username: string;
    email: string;
    reason: string;
    agreement: boolean;
  }

  async function signUpPage(
    reply: FastifyReply,
    opts: { status?: number; form?: SignUpForm; errors?: Record<string, string>; error?: string },
  ): Promise<FastifyReply> {
    const mode = core.config.omniauthOnly ? 'closed' : await getRegistrationsMode(core);
    const closed = mode === 'closed';
    const settings = closed ? await getInstanceSettings(core) : null;
    return page(reply, {
      status: opts.status ?? (closed ? 403 : 200),
      template: 'auth/sign_up',
      title: 'auth.register',
      instance,
      csrf: reply.generateCsrf(),
      data: {
        closed,
        closedMessage: settings ? plainText(settings.closedRegistrationsMessage) : '',
        approvalRequired: mode === 'approved',
        rules: closed ? [] : (await listRules(core)).map((r) => ({ text: r.text, hint: r.hint })),
        form: opts.form ?? { username: '', email: '', reason: '', agreement: false },
        errors: opts.errors ?? {},
        error: opts.error ?? null,
      },
    });
  }

  app.get('/auth/sign_up', async (_request, reply) => signUpPage(reply, {}));

  const FIELD_LABELS: Record<string, string> = {
    username: 'auth.username',
    email: 'auth.email',
    password: 'auth.password',
    agreement: 'auth.agreement',
    reason: 'auth.reason',
    locale: 'auth.locale',
  };

  app.post('/auth/sign_up', form, async (request, reply) => {
    const input: SignUpForm = {
      username: formField(request, 'username', 200).trim(),
      email: formField(request, 'email', 1000).trim(),
      reason: formField(request, 'reason', 2000),
      agreement: formCheckbox(request, 'agreement'),
    };
    if (await limited(reply, RATE_LIMITS.signUp, request.ip)) return reply;
    const password = formField(request, 'password', 1000);
    if (password !== formField(request, 'password_confirmation', 1000)) {
      return signUpPage(reply, {
        status: 422,
        form: input,
        errors: { password_confirmation: `${t('auth.confirm_password')} ${t('passwords.mismatch')}` },
      });
    }
    try {
      const { user } = await registerUser(core, {
        username: input.username,
        email: input.email,
        password,
        agreement: input.agreement,
        locale: requestLocale(request),
        reason: input.reason || null,
        appId: null,
        ip: request.ip,
      });
      return messagePage(reply, core, {
        title: 'auth.signed_up_title',
        lines: [user.approved ? 'auth.signed_up' : 'auth.signed_up_pending'],
        translate: true,
      });
    } catch (err) {
      if (err instanceof RegistrationsClosedError) return signUpPage(reply, { status: 403 });
      if (err instanceof AccountValidationError) {
        const errors: Record<string, string> = {};
        for (const [field, list] of Object.entries(err.problems)) {
          errors[field] = `${t(FIELD_LABELS[field] ?? 'auth.username')} ${list.map((p) => p.description).join(', ')}`;
        }
        return signUpPage(reply, { status: 422, form: input, errors });
      }
      throw err;
    }
  });

  // --- e-mail confirmation link ---------------------------------------------------------------

  app.get('/auth/confirmation', async (request, reply) => {
    const user = await confirmByToken(core, queryField(request, 'confirmation_token', 200));
    if (!user)
      return messagePage(reply, core, {
        status: 404,
        title: 'auth.confirmation.failed_title',
        lines: ['auth.confirmation.failed'],
        translate: true,
      });
    // Back to the app the user signed up with, as Mastodon does.
    const client = user.createdByAppId !== null ? await findAppById(core, user.createdByAppId) : null;
    const target = client ? browserRedirectUri(client) : null;
    if (target) return reply.redirect(target, 302);
    const account = await collection(core.db, accounts).findOne(
      { _id: user.accountId },
      { projection: { username: 1 } },
    );
    const lines = [t('auth.confirmation.confirmed', { username: account?.username ?? '' })];
    if (!user.approved) lines.push(t('auth.confirmation.pending'));
    return messagePage(reply, core, {
      title: 'auth.confirmation.confirmed_title',
      lines,
      link: user.approved ? { href: '/auth/sign_in', label: 'auth.login' } : undefined,
    });
  });

  app.get('/auth/confirmation/new', async (_request, reply) =>
    page(reply, {
      template: 'auth/confirmation_new',
      title: 'confirmations.new_title',
      instance,
      csrf: reply.generateCsrf(),
    }),
  );

  app.post('/auth/confirmation', form, async (request, reply) => {
    const email = formField(request, 'email', 1000);
    if (await limited(reply, RATE_LIMITS.emailConfirmationPerIp, request.ip)) return reply;
    await resendConfirmationByEmail(core, email);
    // The same answer whether the address is known, unconfirmed or not.
    return messagePage(reply, core, {
      title: 'confirmations.sent_title',
      lines: ['confirmations.sent'],
      translate: true,
    });
  });

  // --- password reset -------------------------------------------------------------------------

  const passwordNewPage = (reply: FastifyReply, status = 200, error?: string) =>
    page(reply, {
      status,
      template: 'auth/password_new',
      title: 'passwords.new_title',
      instance,
      csrf: reply.generateCsrf(),
      data: { error: error ?? null },
    });

  app.get('/auth/password/new', async (_request, reply) => passwordNewPage(reply));

  app.post('/auth/password', form, async (request, reply) => {
    const email = formField(request, 'email', 1000).trim().toLowerCase();
    if (await limited(reply, RATE_LIMITS.passwordResetPerIp, request.ip)) return reply;
    if (email && (await limited(reply, RATE_LIMITS.passwordResetPerEmail, hashSecret(email)))) return reply;
    await requestPasswordReset(core, email);
    // The same answer whether the address is known or not.
    return messagePage(reply, core, { title: 'passwords.sent_title', lines: ['passwords.sent'], translate: true });
  });

  const passwordEditPage = (reply: FastifyReply, token: string, status = 200, errors: Record<string, string> = {}) =>
    page(reply, {
      status,
      template: 'auth/password_edit',
      title: 'passwords.edit_title',
      instance,
      csrf: reply.generateCsrf(),
      data: { token, errors },
    });

  const badToken = (reply: FastifyReply, reason: 'invalid' | 'expired') =>
    passwordNewPage(
      reply,
      reason === 'expired' ? 410 : 404,
      t(reason === 'expired' ? 'passwords.expired_token' : 'passwords.invalid_token'),
    );

  app.get('/auth/password/edit', async (request, reply) => {
    const token = queryField(request, 'reset_password_token', 200);
    const check = await checkResetToken(core, token);
    if (!check.ok) return badToken(reply, check.reason);
    return passwordEditPage(reply, token);
  });

  app.post('/auth/password/edit', form, async (request, reply) => {
    const token = formField(request, 'reset_password_token', 200);
    const password = formField(request, 'password', 1000);
    if (password !== formField(request, 'password_confirmation', 1000)) {
      const check = await checkResetToken(core, token);
      if (!check.ok) return badToken(reply, check.reason);
      return passwordEditPage(reply, token, 422, {
        password_confirmation: `${t('auth.confirm_password')} ${t('passwords.mismatch')}`,
      });
    }
    const result = await resetPassword(core, token, password);
    if (!result.ok) {
      if (result.reason === 'password')
        return passwordEditPage(reply, token, 422, { password: `${t('auth.password')} ${result.problem}` });
      return badToken(reply, result.reason);
    }
    // Any session this browser had ended with the others.
    await endSession(core, request, reply);
    return messagePage(reply, core, {
      title: 'passwords.updated_title',
      lines: ['passwords.updated'],
      translate: true,
      link: { href: '/auth/sign_in', label: 'auth.login' },
    });
  });

  // --- account page: password and e-mail ------------------------------------------------------

  async function editPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    opts: { status?: number; notice?: string; error?: string; email?: string } = {},
  ): Promise<FastifyReply> {
    const current = webSessionPublicId(sessionId(request));
    const sessions = (await listWebSessions(core, user._id)).map((s) => {
      const { browser, platform } = describeUserAgent(s.userAgent);
      const name = browser
        ? platform
          ? t('sessions.browser_on', { browser, platform })
          : browser
        : t('sessions.unknown_browser');
      return { id: s.id, name, ip: s.ip ?? '?', lastUsedAt: formatDate(s.lastUsedAt), current: s.id === current };
    });
    return page(reply, {
      status: opts.status,
      template: 'auth/edit',
      title: 'account.edit_title',
      instance,
      signedInAs: username,
      csrf: reply.generateCsrf(),
      data: {
        email: user.email,
        unconfirmedEmail: user.unconfirmedEmail,
        notice: opts.notice ?? null,
        error: opts.error ?? null,
        form: { email: opts.email ?? '' },
        sessions,
      },
    });
  }

  app.get('/auth/edit', async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/auth/edit');
    if (!signedIn) return reply;
    return editPage(request, reply, signedIn.user, signedIn.account.username);
  });

  app.post('/auth/edit', form, async (request: FastifyRequest, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/auth/edit');
    if (!signedIn) return reply;
    const { user, account } = signedIn;
    const current = formField(request, 'current_password', 1000);
    const problemText = (err: CredentialError): string =>
      Object.entries(err.problems)
        .map(([field, problem]) => t(`account.errors.${field}`, { problem: problem ?? '' }))
        .join(' ');
    try {
      if (formField(request, 'change') === 'email') {
        const email = formField(request, 'email', 1000);
        const updated = await changeEmail(core, user, account, { current, email });
        return editPage(request, reply, updated, account.username, { notice: t('account.email_updated') });
      }
      const password = formField(request, 'password', 1000);
      if (password !== formField(request, 'password_confirmation', 1000))
        return editPage(request, reply, user, account.username, {
          status: 422,
          error: `${t('auth.confirm_password')} ${t('passwords.mismatch')}`,
        });
      const updated = await changePassword(core, user, { current, password, keepSession: sessionId(request) });
      return editPage(request, reply, updated, account.username, { notice: t('account.password_updated') });
    } catch (err) {
      if (err instanceof CredentialError)
        return editPage(request, reply, user, account.username, {
          status: 422,
          error: problemText(err),
          email: formField(request, 'email', 1000),
        });
      throw err;
    }
  });

  // --- sessions (listed on the account page) ---------------------------------------------------

  // DELETE in Mastodon (Settings::SessionsController); a form posts it with `_method=delete`.
  app.post<{ Params: { id: string } }>('/settings/sessions/:id', form, async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/auth/edit');
    if (!signedIn) return reply;
    const done = await destroyWebSessionById(core, signedIn.user._id, request.params.id);
    return editPage(request, reply, signedIn.user, signedIn.account.username, {
      status: done ? 200 : 404,
      notice: done ? t('sessions.revoked') : undefined,
      error: done ? undefined : t('errors.not_found'),
    });
  });

  app.post('/settings/sessions', form, async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/auth/edit');
    if (!signedIn) return reply;
    await destroyUserWebSessions(core, signedIn.user._id, sessionId(request));
    return editPage(request, reply, signedIn.user, signedIn.account.username, { notice: t('sessions.others_revoked') });
  });
};

export default authPages;
