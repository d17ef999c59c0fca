// Sign-up (Devise's registrations in Mastodon) with the server's rules and the approval-mode
// reason, and the e-mail confirmation link and its resending: the same core operations, modes,
// blocks and rate limits as POST /api/v1/accounts.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { translator } from '../i18n.ts';
import { findAccount } from '../../core/accounts/queries.ts';
import { RATE_LIMITS } from '../../core/rateLimit.ts';
import { registerUser, RegistrationsClosedError } from '../../core/accounts/registration.ts';
import { AccountValidationError } from '../../core/accounts/create.ts';
import { getRegistrationsMode } from '../../core/settings/settings.ts';
import { getInstanceSettings } from '../../core/instance/settings.ts';
import { listRules } from '../../core/instance/rules.ts';
import { confirmByToken, resendConfirmationByEmail } from '../../core/users/confirmation.ts';
import { browserRedirectUri, findAppById } from '../../core/oauth/apps.ts';
import { page } from '../view.ts';
import { formCheckbox, formField, queryField } from '../forms.ts';
import { messagePage } from '../pages.ts';
import { rateLimited } from '../rateLimited.ts';

const t = translator('en');

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

const signUpPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

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
    if (await rateLimited(core, reply, RATE_LIMITS.signUp, request.ip)) return reply;
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
    const account = await findAccount(core, user.accountId);
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
    if (await rateLimited(core, reply, RATE_LIMITS.emailConfirmationPerIp, request.ip)) return reply;
    await resendConfirmationByEmail(core, email);
    // The same answer whether the address is known, unconfirmed or not.
    return messagePage(reply, core, {
      title: 'confirmations.sent_title',
      lines: ['confirmations.sent'],
      translate: true,
    });
  });
};

export default signUpPages;
