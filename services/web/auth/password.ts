// Password reset (Devise's passwords in Mastodon): the request form, the e-mailed single-use link
// and the new password; the same answer whether the address is known or not.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import { translator } from '../i18n.ts';
import { hashSecret } from '../../core/auth/tokens.ts';
import { RATE_LIMITS } from '../../core/rateLimit.ts';
import { checkResetToken, requestPasswordReset, resetPassword } from '../../core/users/passwordReset.ts';
import { page } from '../view.ts';
import { endSession } from '../session.ts';
import { formField, queryField } from '../forms.ts';
import { messagePage } from '../pages.ts';
import { rateLimited } from '../rateLimited.ts';

const t = translator('en');

const passwordPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

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
    if (await rateLimited(core, reply, RATE_LIMITS.passwordResetPerIp, request.ip)) return reply;
    if (email && (await rateLimited(core, reply, RATE_LIMITS.passwordResetPerEmail, hashSecret(email)))) return reply;
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
};

export default passwordPages;
