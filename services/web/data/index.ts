// Your data: the export page with the CSV files in Mastodon's formats (/settings/export,
// /settings/exports/*.csv), and imports of those files (/settings/imports): upload, confirm or
// cancel, then the scheduler processes the rows in the background and the page shows progress.
// The work is done by core/userData; these routes only read forms and render.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { IMPORT_TYPES, type BulkImportDoc, type ImportType } from '../../core/model/bulkImports.ts';
import { exportCounts, exportCsv, type ExportType } from '../../core/userData/exports.ts';
import { cancelImport, confirmImport, createImport, listImports, ownImport } from '../../core/userData/imports.ts';
import { ImportFileError } from '../../core/userData/importFile.ts';
import { parseId } from '../../core/ids.ts';
import {
  archiveAvailable,
  listArchives,
  nextArchiveAllowedAt,
  ownArchive,
  requestArchive,
} from '../../core/userData/archive.ts';
import { storageFor } from '../../core/media/storage.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { formField } from '../forms.ts';
import { translator } from '../i18n.ts';
import { formPage, page } from '../view.ts';
import { formatDate } from '../format.ts';
import { asSignedIn, signedInForm, requireSignedIn } from '../guard.ts';
import { notFoundPage } from '../pages.ts';

const t = translator('en');

/** Mastodon's paths and the file names it sends (its importer guesses the type by these names). */
const CSV_FILES: Array<{ path: string; type: ExportType; filename: string }> = [
  { path: '/settings/exports/follows.csv', type: 'follows', filename: 'following_accounts.csv' },
  { path: '/settings/exports/lists.csv', type: 'lists', filename: 'lists.csv' },
  { path: '/settings/exports/blocks.csv', type: 'blocks', filename: 'blocked_accounts.csv' },
  { path: '/settings/exports/mutes.csv', type: 'mutes', filename: 'muted_accounts.csv' },
  { path: '/settings/exports/domain_blocks.csv', type: 'domain_blocks', filename: 'blocked_domains.csv' },
  { path: '/settings/exports/bookmarks.csv', type: 'bookmarks', filename: 'bookmarks.csv' },
];

const dataPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  // --- export ---------------------------------------------------------------------------------

  async function exportPage(
    reply: FastifyReply,
    user: UserDoc,
    account: AccountDoc,
    opts: { status?: number; notice?: string; error?: string } = {},
  ): Promise<FastifyReply> {
    const [counts, archives, nextAllowed] = await Promise.all([
      exportCounts(core, account),
      listArchives(core, user._id),
      nextArchiveAllowedAt(core, user._id),
    ]);
    const files = new Map(CSV_FILES.map((f) => [f.type, f.path]));
    const kinds = [
      'statuses',
      'followers',
      'follows',
      'lists',
      'blocks',
      'mutes',
      'domain_blocks',
      'bookmarks',
    ] as const;
    return formPage(
      reply,
      {
        template: 'data/export',
        title: 'data_settings.exports.title',
        instance,
        signedInAs: account.username,
        data: {
          rows: kinds.map((kind) => ({
            label: t(`data_settings.exports.${kind}`),
            count: counts[kind],
            href: files.get(kind as ExportType) ?? null,
          })),
          nextAllowed: nextAllowed ? formatDate(nextAllowed) : null,
          archives: archives.map((b) => ({
            id: String(b._id),
            createdAt: formatDate(b.createdAt),
            href: archiveAvailable(b) ? `/backups/${b._id}/download` : null,
            state: t(
              `data_settings.archive.states.${archiveAvailable(b) ? 'done' : b.state === 'done' ? 'expired' : b.state}`,
            ),
            size: b.size === null ? '' : `${Math.max(1, Math.round(b.size / 1024))} KB`,
          })),
        },
      },
      opts,
    );
  }

  signedInForm(app, core, '/settings/export', {
    show: (request, reply, signedIn) => exportPage(reply, signedIn.user, signedIn.account),
    // Asks for an archive (Mastodon's POST /settings/export); built in the background.
    submit: async (request, reply, signedIn) => {
      const requested = await requestArchive(core, signedIn.user);
      if (!requested.ok)
        return exportPage(reply, signedIn.user, signedIn.account, {
          status: 429,
          error: t('data_settings.archive.too_soon', { date: formatDate(requested.nextAllowedAt) }),
        });
      return exportPage(reply, signedIn.user, signedIn.account, { notice: t('data_settings.archive.requested') });
    },
  });

  app.get<{ Params: { id: string } }>(
    '/backups/:id/download',
    asSignedIn(core, '/settings/export', async (request, reply, signedIn) => {
      const backup = await ownArchive(core, signedIn.user._id, parseId(request.params.id));
      const stored =
        backup && archiveAvailable(backup) ? await storageFor(core).stream(backup.storageKey as string) : null;
      if (!backup || !stored) return notFoundPage(reply, core, signedIn.account.username);
      const name = (backup.storageKey as string).split('/').pop() as string;
      return reply
        .type('application/zip')
        .header('content-length', String(stored.size))
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(stored.body);
    }),
  );

  for (const file of CSV_FILES) {
    app.get(
      file.path,
      asSignedIn(core, '/settings/export', async (request, reply, signedIn) => {
        const csv = await exportCsv(core, signedIn.account._id, file.type);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${file.filename}"`)
          .send(csv);
      }),
    );
  }

  // --- import ---------------------------------------------------------------------------------

  function importView(imp: BulkImportDoc) {
    return {
      id: String(imp._id),
      type: t(`data_settings.imports.types.${imp.type}`),
      mode: t(`data_settings.imports.modes.${imp.overwrite ? 'overwrite' : 'merge'}`),
      state: t(`data_settings.imports.states.${imp.state}`),
      stateKey: imp.state,
      filename: imp.originalFilename,
      createdAt: formatDate(imp.createdAt),
      progress: t('data_settings.imports.progress_value', {
        processed: imp.processedItems,
        total: imp.totalItems,
        imported: imp.importedItems,
      }),
    };
  }

  async function importsPage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; notice?: string; error?: string; type?: string; mode?: string } = {},
  ): Promise<FastifyReply> {
    const recent = await listImports(core, account._id);
    return formPage(
      reply,
      {
        template: 'data/imports',
        title: 'data_settings.imports.title',
        instance,
        signedInAs: account.username,
        data: {
          types: IMPORT_TYPES.map((value) => ({
            value,
            label: t(`data_settings.imports.types.${value}`),
            selected: value === (opts.type ?? 'following'),
          })),
          overwrite: opts.mode === 'overwrite',
          imports: recent.map(importView),
        },
      },
      opts,
    );
  }

  signedInForm(app, core, '/settings/imports', {
    show: (request, reply, signedIn) => importsPage(reply, signedIn.account),
    submit: async (request, reply, signedIn) => {
      const type = formField(request, 'type', 30);
      const mode = formField(request, 'mode', 20);
      const upload = request.uploads.data;
      const again = (error: string) => importsPage(reply, signedIn.account, { status: 422, error, type, mode });
      if (!(IMPORT_TYPES as readonly string[]).includes(type)) return again(t('data_settings.imports.errors.bad_type'));
      if (!upload || upload.data.length === 0) return again(t('data_settings.imports.errors.no_file'));
      try {
        const imp = await createImport(core, signedIn.account, {
          type: type as ImportType,
          overwrite: mode === 'overwrite',
          data: upload.data,
          filename: upload.filename || 'import.csv',
        });
        return reply.redirect(`/settings/imports/${imp._id}`, 303);
      } catch (err) {
        if (err instanceof ImportFileError) return again(t(`data_settings.imports.errors.${err.key}`, err.vars));
        throw err;
      }
    },
  });

  async function signedInImport(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const signedIn = await requireSignedIn(core, request, reply, '/settings/imports');
    if (!signedIn) return null;
    const imp = await ownImport(core, signedIn.account._id, parseId(request.params.id));
    if (!imp) {
      await notFoundPage(reply, core, signedIn.account.username);
      return null;
    }
    return { ...signedIn, imp };
  }

  app.get<{ Params: { id: string } }>('/settings/imports/:id', async (request, reply) => {
    const found = await signedInImport(request, reply);
    if (!found) return reply;
    const { imp, account } = found;
    return page(reply, {
      template: 'data/import',
      title: imp.state === 'unconfirmed' ? 'data_settings.imports.confirm_title' : 'data_settings.imports.details',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        imp: importView(imp),
        unconfirmed: imp.state === 'unconfirmed',
        mismatched: imp.likelyMismatched,
        summary: t(`data_settings.imports.confirm.${imp.overwrite ? 'overwrite' : 'merge'}`, {
          total_items: imp.totalItems,
          type: t(`data_settings.imports.types.${imp.type}`),
          filename: imp.originalFilename,
        }),
      },
    });
  });

  /** An action on one of the user's imports; the imports page says whether it was done. */
  const importAction = (
    path: '/settings/imports/:id/confirm' | '/settings/imports/:id',
    act: (imp: BulkImportDoc) => Promise<boolean>,
    notice: string,
  ) =>
    app.post<{ Params: { id: string } }>(path, { preHandler: app.csrfProtection }, async (request, reply) => {
      const found = await signedInImport(request, reply);
      if (!found) return reply;
      const done = await act(found.imp);
      return importsPage(reply, found.account, { notice: done ? t(notice) : undefined });
    });

  importAction('/settings/imports/:id/confirm', (imp) => confirmImport(core, imp), 'data_settings.imports.confirmed');
  // DELETE in Mastodon (cancelling an unconfirmed import); posted with `_method=delete`.
  importAction('/settings/imports/:id', (imp) => cancelImport(core, imp), 'data_settings.imports.cancelled');
};

export default dataPages;
