// Security keys on Mastodon's paths (/settings/security_keys): the list with each key's nickname,
// adding one (the browser's WebAuthn API through /web/webauthn.js, options from
// /settings/security_keys/options) and removing one. Only once the authenticator app is on, as in
// Mastodon. The work is in core/users/securityKeys.ts.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import { WEBAUTHN_CSP } from '../csp.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { parseId } from '../../core/ids.ts';
import { twoFactorEnabled } from '../../core/users/twoFactor.ts';
import {
  deleteSecurityKey,
  listSecurityKeys,
  NICKNAME_MAX,
  registerSecurityKey,
  SecurityKeyError,
  securityKeyRegistrationOptions,
} from '../../core/users/securityKeys.ts';
import { translator } from '../i18n.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { formField } from '../forms.ts';
import { formatDate } from '../format.ts';
import { asSignedIn, TWO_FACTOR_METHODS } from '../guard.ts';

const t = translator('en');
const KEYS = '/settings/security_keys';
const SETUP_PAGE = { twoFactorSetup: true };

const securityKeyPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  async function keysPage(
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    opts: FormOutcome & { nickname?: string } = {},
  ): Promise<FastifyReply> {
    const keys = await listSecurityKeys(core, user._id);
    reply.header('content-security-policy', WEBAUTHN_CSP);
    const data = {
      keys: keys.map((k) => ({ id: String(k._id), nickname: k.nickname, createdAt: formatDate(k.createdAt) })),
      nicknameMax: NICKNAME_MAX,
      nickname: opts.nickname ?? '',
    };
    return formPage(
      reply,
      { template: 'settings/security_keys', title: 'security_keys.title', instance, signedInAs: username, data },
      opts,
    );
  }

  app.get(
    '/settings/security_keys',
    asSignedIn(core, { returnTo: KEYS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      if (!twoFactorEnabled(signedIn.user)) return reply.redirect(TWO_FACTOR_METHODS, 303);
      return keysPage(reply, signedIn.user, signedIn.account.username);
    }),
  );

  app.get(
    '/settings/security_keys/options',
    asSignedIn(core, { returnTo: KEYS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      try {
        return await securityKeyRegistrationOptions(core, signedIn.user, signedIn.account.username);
      } catch (err) {
        if (err instanceof SecurityKeyError) return reply.code(422).send({ error: t('security_keys.otp_required') });
        throw err;
      }
    }),
  );

  app.post(
    '/settings/security_keys',
    form,
    asSignedIn(core, { returnTo: KEYS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const { user, account } = signedIn;
      const nickname = formField(request, 'nickname', 1000);
      let credential: unknown;
      try {
        credential = JSON.parse(formField(request, 'credential', 20_000) || 'null');
      } catch {
        credential = null;
      }
      try {
        await registerSecurityKey(core, user, nickname, credential);
        return keysPage(reply, user, account.username, { notice: t('security_keys.added') });
      } catch (err) {
        if (!(err instanceof SecurityKeyError)) throw err;
        if (err.problem === 'otp_required') return reply.redirect(TWO_FACTOR_METHODS, 303);
        return keysPage(reply, user, account.username, {
          status: 422,
          error: t(`security_keys.errors.${err.problem}`),
          nickname,
        });
      }
    }),
  );

  // DELETE in Mastodon; a form posts it with `_method=delete`.
  app.post<{ Params: { id: string } }>(
    '/settings/security_keys/:id',
    form,
    asSignedIn(core, { returnTo: KEYS, ...SETUP_PAGE }, async (request, reply, signedIn) => {
      const id = parseId(request.params.id);
      const done = id !== null && (await deleteSecurityKey(core, signedIn.user._id, id));
      return keysPage(reply, signedIn.user, signedIn.account.username, {
        status: done ? 200 : 404,
        notice: done ? t('security_keys.deleted') : undefined,
        error: done ? undefined : t('errors.not_found'),
      });
    }),
  );
};

export default securityKeyPages;
