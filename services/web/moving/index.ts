// Moving and leaving: account aliases (/settings/aliases), moving to another account
// (/settings/migration) and deleting one's own account (/settings/delete), each through its core
// operation (core/accounts/migration.ts, core/users/selfDelete.ts).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import {
  addAlias,
  listAliases,
  MigrationError,
  migrationCooldownUntil,
  migrationHistory,
  moveAccount,
  removeAlias,
} from '../../core/accounts/migration.ts';
import { exportAcct } from '../../core/userData/exports.ts';
import { requestAccountDeletion } from '../../core/users/selfDelete.ts';
import { formField } from '../forms.ts';
import { translator } from '../i18n.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { formatDate } from '../format.ts';
import { asSignedIn, signedInForm, type SignedIn } from '../guard.ts';
import { messagePage } from '../pages.ts';
import { endSession } from '../session.ts';

const t = translator('en');

type Errors = Record<string, string>;

/** What a form of these pages came to: besides the notice, per-field errors and the typed handle. */
type MovingOutcome = FormOutcome & { errors?: Errors; acct?: string };

type Render = (reply: FastifyReply, account: AccountDoc, outcome?: MovingOutcome) => Promise<FastifyReply>;

function errorsOf(err: MigrationError): Errors {
  return { [err.field]: t(`data_settings.${err.key}`) };
}

const movingPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  /** One of these pages for `account`, with the outcome of its last form. */
  const movingPage = (
    reply: FastifyReply,
    account: AccountDoc,
    view: { template: string; title: string; data?: Record<string, unknown> },
    outcome: MovingOutcome = {},
  ) =>
    formPage(
      reply,
      {
        ...view,
        instance,
        signedInAs: account.username,
        data: { errors: outcome.errors ?? {}, acct: outcome.acct ?? '', ...view.data },
      },
      outcome,
    );

  /**
   * A page whose form names an account (`acct`) and whose core operation may refuse with a
   * MigrationError: done, the page shows the operation's notice; refused, the error at its field (422).
   */
  function accountForm(
    path: '/settings/aliases' | '/settings/migration',
    render: Render,
    run: (
      signedIn: SignedIn,
      acct: string,
      request: FastifyRequest,
    ) => Promise<{ account: AccountDoc; notice: string }>,
  ): void {
    signedInForm(app, core, path, {
      show: (request, reply, signedIn) => render(reply, signedIn.account),
      submit: async (request, reply, signedIn) => {
        const acct = formField(request, 'acct', 500);
        try {
          const done = await run(signedIn, acct, request);
          return render(reply, done.account, { notice: done.notice });
        } catch (err) {
          if (err instanceof MigrationError)
            return render(reply, signedIn.account, { status: 422, errors: errorsOf(err), acct });
          throw err;
        }
      },
    });
  }

  // --- aliases --------------------------------------------------------------------------------

  const aliasesPage: Render = async (reply, account, outcome) => {
    const aliases = (await listAliases(core, account)).map((a) => ({
      uri: a.uri,
      acct: a.account ? exportAcct(core, a.account) : a.uri,
    }));
    const view = { template: 'moving/aliases', title: 'data_settings.aliases.title', data: { aliases } };
    return movingPage(reply, account, view, outcome);
  };

  accountForm('/settings/aliases', aliasesPage, async ({ account }, acct) => ({
    account: await addAlias(core, account, acct),
    notice: t('data_settings.aliases.created'),
  }));

  // DELETE /settings/aliases/:id in Mastodon; here the alias is named by its URI in the form.
  app.post(
    '/settings/aliases/remove',
    { preHandler: app.csrfProtection },
    asSignedIn(core, '/settings/aliases', async (request, reply, signedIn) => {
      const updated = await removeAlias(core, signedIn.account, formField(request, 'uri', 2000));
      return aliasesPage(reply, updated, {
        notice: updated !== signedIn.account ? t('data_settings.aliases.deleted') : undefined,
      });
    }),
  );

  // --- migration ------------------------------------------------------------------------------

  const migrationPage: Render = async (reply, account, outcome) => {
    const [cooldown, { past, movedTo }] = await Promise.all([
      migrationCooldownUntil(core, account),
      migrationHistory(core, account),
    ]);
    const data = {
      movedTo: movedTo ? exportAcct(core, movedTo) : null,
      cooldown: cooldown ? formatDate(cooldown) : null,
      past: past.map((m) => ({ acct: m.acct, date: formatDate(m.createdAt) })),
    };
    return movingPage(
      reply,
      account,
      { template: 'moving/migration', title: 'data_settings.migrations.title', data },
      outcome,
    );
  };

  accountForm('/settings/migration', migrationPage, async ({ account, user }, acct, request) => ({
    account: await moveAccount(core, account, user, { acct, password: formField(request, 'current_password', 200) }),
    notice: t('data_settings.migrations.moved', { acct: acct.trim().replace(/^@/, '') }),
  }));

  // --- deletion -------------------------------------------------------------------------------

  const deletePage = (reply: FastifyReply, account: AccountDoc, outcome: FormOutcome = {}) =>
    movingPage(reply, account, { template: 'moving/delete', title: 'data_settings.deletes.title' }, outcome);

  signedInForm(app, core, '/settings/delete', {
    show: (request, reply, signedIn) => deletePage(reply, signedIn.account),
    // DELETE in Mastodon; the form posts it.
    submit: async (request, reply, signedIn) => {
      const deleted = await requestAccountDeletion(
        core,
        signedIn.user,
        signedIn.account,
        formField(request, 'password', 200),
      );
      if (!deleted)
        return deletePage(reply, signedIn.account, {
          status: 422,
          error: t('data_settings.deletes.challenge_not_passed'),
        });
      await endSession(core, request, reply);
      return messagePage(reply, core, {
        title: 'data_settings.deletes.success_title',
        lines: ['data_settings.deletes.success_msg'],
        translate: true,
      });
    },
  });
};

export default movingPages;
