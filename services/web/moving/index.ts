// Moving and leaving: account aliases (/settings/aliases), moving to another account
// (/settings/migration) and deleting one's own account (/settings/delete), each through its core
// operation (core/accounts/migration.ts, core/users/selfDelete.ts).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { collection } from '../../core/db/mongo.ts';
import { accounts } from '../../core/model/accounts.ts';
import { accountMigrations } from '../../core/model/accountMigrations.ts';
import {
  addAlias,
  listAliases,
  MigrationError,
  migrationCooldownUntil,
  moveAccount,
  removeAlias,
} from '../../core/accounts/migration.ts';
import { exportAcct } from '../../core/userData/exports.ts';
import { requestAccountDeletion } from '../../core/users/selfDelete.ts';
import { formField } from '../forms.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { formatDate } from '../format.ts';
import { requireSignedIn } from '../guard.ts';
import { messagePage } from '../pages.ts';
import { endSession } from '../session.ts';

const t = translator('en');

type Errors = Record<string, string>;

function errorsOf(err: MigrationError): Errors {
  return { [err.field]: t(`data_settings.${err.key}`) };
}

const movingPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  // --- aliases --------------------------------------------------------------------------------

  async function aliasesPage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; notice?: string; errors?: Errors; acct?: string } = {},
  ): Promise<FastifyReply> {
    const aliases = await listAliases(core, account);
    return page(reply, {
      status: opts.status,
      template: 'moving/aliases',
      title: 'data_settings.aliases.title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        notice: opts.notice ?? null,
        errors: opts.errors ?? {},
        acct: opts.acct ?? '',
        aliases: aliases.map((a) => ({ uri: a.uri, acct: a.account ? exportAcct(core, a.account) : a.uri })),
      },
    });
  }

  app.get('/settings/aliases', async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/aliases');
    if (!signedIn) return reply;
    return aliasesPage(reply, signedIn.account);
  });

  app.post('/settings/aliases', { preHandler: app.csrfProtection }, async (request: FastifyRequest, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/aliases');
    if (!signedIn) return reply;
    const acct = formField(request, 'acct', 500);
    try {
      const updated = await addAlias(core, signedIn.account, acct);
      return aliasesPage(reply, updated, { notice: t('data_settings.aliases.created') });
    } catch (err) {
      if (err instanceof MigrationError)
        return aliasesPage(reply, signedIn.account, { status: 422, errors: errorsOf(err), acct });
      throw err;
    }
  });

  // DELETE /settings/aliases/:id in Mastodon; here the alias is named by its URI in the form.
  app.post('/settings/aliases/remove', { preHandler: app.csrfProtection }, async (request: FastifyRequest, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/aliases');
    if (!signedIn) return reply;
    const updated = await removeAlias(core, signedIn.account, formField(request, 'uri', 2000));
    return aliasesPage(reply, updated, {
      notice: updated !== signedIn.account ? t('data_settings.aliases.deleted') : undefined,
    });
  });

  // --- migration ------------------------------------------------------------------------------

  async function migrationPage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; notice?: string; errors?: Errors; acct?: string } = {},
  ): Promise<FastifyReply> {
    const [cooldown, past, target] = await Promise.all([
      migrationCooldownUntil(core, account),
      collection(core.db, accountMigrations).find({ accountId: account._id }).sort({ _id: -1 }).limit(10).toArray(),
      account.movedToAccountId === null
        ? null
        : collection(core.db, accounts).findOne({ _id: account.movedToAccountId }),
    ]);
    return page(reply, {
      status: opts.status,
      template: 'moving/migration',
      title: 'data_settings.migrations.title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        notice: opts.notice ?? null,
        errors: opts.errors ?? {},
        acct: opts.acct ?? '',
        movedTo: target ? exportAcct(core, target) : null,
        cooldown: cooldown ? formatDate(cooldown) : null,
        past: past.map((m) => ({ acct: m.acct, date: formatDate(m.createdAt) })),
      },
    });
  }

  app.get('/settings/migration', async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/migration');
    if (!signedIn) return reply;
    return migrationPage(reply, signedIn.account);
  });

  app.post('/settings/migration', { preHandler: app.csrfProtection }, async (request: FastifyRequest, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/migration');
    if (!signedIn) return reply;
    const acct = formField(request, 'acct', 500);
    try {
      const moved = await moveAccount(core, signedIn.account, signedIn.user, {
        acct,
        password: formField(request, 'current_password', 200),
      });
      return migrationPage(reply, moved, {
        notice: t('data_settings.migrations.moved', { acct: acct.trim().replace(/^@/, '') }),
      });
    } catch (err) {
      if (err instanceof MigrationError)
        return migrationPage(reply, signedIn.account, { status: 422, errors: errorsOf(err), acct });
      throw err;
    }
  });

  // --- deletion -------------------------------------------------------------------------------

  function deletePage(reply: FastifyReply, account: AccountDoc, opts: { status?: number; error?: string } = {}) {
    return page(reply, {
      status: opts.status,
      template: 'moving/delete',
      title: 'data_settings.deletes.title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: { error: opts.error ?? null },
    });
  }

  app.get('/settings/delete', async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/delete');
    if (!signedIn) return reply;
    return deletePage(reply, signedIn.account);
  });

  // DELETE in Mastodon; the form posts it.
  app.post('/settings/delete', { preHandler: app.csrfProtection }, async (request: FastifyRequest, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/delete');
    if (!signedIn) return reply;
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
  });
};

export default movingPages;
