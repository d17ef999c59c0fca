// The account page, /auth/edit (Devise's registrations#edit in Mastodon): changing the password
// (current one required) and the e-mail address, and the browser sessions with their last use,
// logged out one at a time or all others at once.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { translator } from '../i18n.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { changeEmail, changePassword, CredentialError } from '../../core/users/credentials.ts';
import {
  destroyUserWebSessions,
  destroyWebSessionById,
  listWebSessions,
  webSessionPublicId,
} from '../../core/oauth/sessions.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { formatDate } from '../format.ts';
import { sessionId } from '../session.ts';
import { formField } from '../forms.ts';
import { asSignedIn, signedInForm } from '../guard.ts';
import { describeUserAgent } from '../userAgent.ts';

const t = translator('en');

const accountEditPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  // --- account page: password and e-mail ------------------------------------------------------

  async function editPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    opts: FormOutcome & { email?: string } = {},
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
    const data = {
      email: user.email,
      unconfirmedEmail: user.unconfirmedEmail,
      form: { email: opts.email ?? '' },
      sessions,
    };
    return formPage(
      reply,
      { template: 'auth/edit', title: 'account.edit_title', instance, signedInAs: username, data },
      opts,
    );
  }

  signedInForm(app, core, '/auth/edit', {
    show: (request, reply, signedIn) => editPage(request, reply, signedIn.user, signedIn.account.username),
    submit: async (request, reply, signedIn) => {
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
    },
  });

  // --- sessions (listed on the account page) ---------------------------------------------------

  // DELETE in Mastodon (Settings::SessionsController); a form posts it with `_method=delete`.
  app.post<{ Params: { id: string } }>(
    '/settings/sessions/:id',
    form,
    asSignedIn(core, '/auth/edit', async (request, reply, signedIn) => {
      const done = await destroyWebSessionById(core, signedIn.user._id, request.params.id);
      return editPage(request, reply, signedIn.user, signedIn.account.username, {
        status: done ? 200 : 404,
        notice: done ? t('sessions.revoked') : undefined,
        error: done ? undefined : t('errors.not_found'),
      });
    }),
  );

  app.post(
    '/settings/sessions',
    form,
    asSignedIn(core, '/auth/edit', async (request, reply, signedIn) => {
      await destroyUserWebSessions(core, signedIn.user._id, sessionId(request));
      return editPage(request, reply, signedIn.user, signedIn.account.username, {
        notice: t('sessions.others_revoked'),
      });
    }),
  );
};

export default accountEditPages;
