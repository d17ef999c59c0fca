// Two-factor authentication pages, on Mastodon's paths: the methods page
// (/settings/two_factor_authentication_methods), setting up an authenticator app
// (/settings/otp_authentication → QR code → a first code confirms it), new recovery codes, and
// turning it off. Changing anything needs the password (Mastodon's challenge) or a current code.
// The work is in core/users/twoFactor.ts.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { WebOptions } from '../index.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { verifyPassword } from '../../core/users/passwords.ts';
import {
  beginOtpSetup,
  confirmOtpSetup,
  disableTwoFactor,
  pendingOtpSetup,
  regenerateRecoveryCodes,
  twoFactorEnabled,
  twoFactorSetupRequired,
  verifySecondFactor,
} from '../../core/users/twoFactor.ts';
import { RATE_LIMITS } from '../../core/rateLimit.ts';
import { rateLimited } from '../rateLimited.ts';
import { listSecurityKeys } from '../../core/users/securityKeys.ts';
import { translator } from '../i18n.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { formField } from '../forms.ts';
import { asSignedIn, TWO_FACTOR_METHODS } from '../guard.ts';

const t = translator('en');
const METHODS = TWO_FACTOR_METHODS;
/** These pages stay open to a user whose role requires two-factor authentication. */
const SETUP_PAGE = { twoFactorSetup: true };

const twoFactorPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  /** One of these pages for `username`, with the outcome of the last form. */
  const twoFactorPage = (
    reply: FastifyReply,
    username: string,
    view: { template: string; title: string; data?: Record<string, unknown> },
    outcome: FormOutcome = {},
  ) => formPage(reply, { ...view, instance, signedInAs: username }, outcome);

  async function methodsPage(
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    outcome: FormOutcome = {},
  ): Promise<FastifyReply> {
    const data = {
      required: await twoFactorSetupRequired(core, user),
      enabled: twoFactorEnabled(user),
      recoveryCodesLeft: user.otpBackupCodes?.length ?? 0,
      securityKeys: (await listSecurityKeys(core, user._id)).length,
    };
    return twoFactorPage(
      reply,
      username,
      { template: 'settings/two_factor_methods', title: 'two_factor.title', data },
      outcome,
    );
  }

  function recoveryCodesPage(reply: FastifyReply, username: string, codes: string[], notice: string) {
    const view = { template: 'settings/recovery_codes', title: 'two_factor.recovery_codes', data: { codes } };
    return twoFactorPage(reply, username, view, { notice });
  }

  /** Mastodon's challenge: the password, or here also a current two-factor code. Guesses are throttled. */
  async function challengePassed(request: FastifyRequest, reply: FastifyReply, user: UserDoc): Promise<boolean> {
    if (await rateLimited(core, reply, RATE_LIMITS.loginPerAccount, `challenge:${user._id}`)) return false;
    const typed = formField(request, 'current_password', 1000);
    if (!typed) return false;
    if (await verifyPassword(user.passwordHash, typed)) return true;
    return twoFactorEnabled(user) && verifySecondFactor(core, user, typed);
  }

  app.get(
    '/settings/two_factor_authentication_methods',
    asSignedIn(core, { returnTo: METHODS, ...SETUP_PAGE }, (request, reply, signedIn) =>
      methodsPage(reply, signedIn.user, signedIn.account.username),
    ),
  );

  // --- setting up the authenticator app ------------------------------------------------------

  const setupPage = (reply: FastifyReply, username: string, status = 200, error?: string) =>
    twoFactorPage(reply, username, { template: 'settings/otp_setup', title: 'two_factor.otp' }, { status, error });

  app.get(
    '/settings/otp_authentication',
    asSignedIn(core, { returnTo: '/settings/otp_authentication', ...SETUP_PAGE }, async (request, reply, signedIn) => {
      if (twoFactorEnabled(signedIn.user))
        return methodsPage(reply, signedIn.user, signedIn.account.username, {
          notice: t('two_factor.already_enabled'),
        });
      return setupPage(reply, signedIn.account.username);
    }),
  );

  app.post(
    '/settings/otp_authentication',
    form,
    asSignedIn(core, { returnTo: '/settings/otp_authentication', ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const { user, account } = signedIn;
      if (twoFactorEnabled(user))
        return methodsPage(reply, user, account.username, { notice: t('two_factor.already_enabled') });
      if (!(await challengePassed(request, reply, user)))
        return reply.sent ? reply : setupPage(reply, account.username, 422, t('two_factor.wrong_password'));
      await beginOtpSetup(core, user, account.username);
      return reply.redirect('/settings/two_factor_authentication/confirmation/new', 303);
    }),
  );

  async function confirmationPage(
    reply: FastifyReply,
    username: string,
    setup: { secret: string; uri: string },
    status = 200,
    error?: string,
  ): Promise<FastifyReply> {
    const svg = await QRCode.toString(setup.uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
    const data = {
      qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
      // Grouped by four for typing, as authenticator apps show it.
      secret: setup.secret.replace(/(.{4})/g, '$1 ').trim(),
    };
    return twoFactorPage(
      reply,
      username,
      { template: 'settings/otp_confirm', title: 'two_factor.otp', data },
      { status, error },
    );
  }

  app.get(
    '/settings/two_factor_authentication/confirmation/new',
    asSignedIn(core, { returnTo: '/settings/otp_authentication', ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const setup = await pendingOtpSetup(core, signedIn.user, signedIn.account.username);
      if (!setup) return reply.redirect('/settings/otp_authentication', 303);
      return confirmationPage(reply, signedIn.account.username, setup);
    }),
  );

  app.post(
    '/settings/two_factor_authentication/confirmation',
    form,
    asSignedIn(core, { returnTo: '/settings/otp_authentication', ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const { user, account } = signedIn;
      const codes = await confirmOtpSetup(core, user, formField(request, 'otp_attempt', 100));
      if (codes) return recoveryCodesPage(reply, account.username, codes, t('two_factor.enabled_success'));
      const setup = await pendingOtpSetup(core, user, account.username);
      if (!setup) return reply.redirect('/settings/otp_authentication', 303);
      return confirmationPage(reply, account.username, setup, 422, t('two_factor.wrong_code'));
    }),
  );

  // --- recovery codes and turning it off -----------------------------------------------------

  app.post(
    '/settings/two_factor_authentication/recovery_codes',
    form,
    asSignedIn(core, { returnTo: METHODS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const { user, account } = signedIn;
      if (!twoFactorEnabled(user)) return methodsPage(reply, user, account.username, { status: 422 });
      if (!(await challengePassed(request, reply, user)))
        return reply.sent
          ? reply
          : methodsPage(reply, user, account.username, { status: 422, error: t('two_factor.wrong_password') });
      const codes = await regenerateRecoveryCodes(core, user);
      return recoveryCodesPage(reply, account.username, codes ?? [], t('two_factor.recovery_codes_regenerated'));
    }),
  );

  app.post(
    '/settings/two_factor_authentication_methods/disable',
    form,
    asSignedIn(core, { returnTo: METHODS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const { user, account } = signedIn;
      if (!twoFactorEnabled(user)) return methodsPage(reply, user, account.username);
      if (!(await challengePassed(request, reply, user)))
        return reply.sent
          ? reply
          : methodsPage(reply, user, account.username, { status: 422, error: t('two_factor.wrong_password') });
      await disableTwoFactor(core, user._id);
      return methodsPage(reply, { ...user, otpRequiredForLogin: false, otpBackupCodes: [] }, account.username, {
        notice: t('two_factor.disabled_success'),
      });
    }),
  );
};

export default twoFactorPages;
