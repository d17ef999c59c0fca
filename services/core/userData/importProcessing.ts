// Processing confirmed imports (Mastodon's BulkImportService and Import::RowService), a batch at a
// time under a lease, for the scheduler's `bulk-imports` job: overwrite first removes what the
// file does not name, then each row is applied. Remote accounts are resolved through WebFinger
// (SSRF-safe fetches), unknown statuses fetched by their URI.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { statuses } from '../model/statuses.ts';
import { listMembers, lists } from '../model/lists.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import {
  bulkImportRows,
  bulkImports,
  type BulkImportDoc,
  type BulkImportRowDoc,
  type ImportRowData,
} from '../model/bulkImports.ts';
import { ApiError } from '../errors.ts';
import { followAccount } from '../graph/follow.ts';
import { unfollowAccount } from '../graph/unfollow.ts';
import { blockAccount, unblockAccount } from '../graph/block.ts';
import { muteAccount, unmuteAccount } from '../graph/mute.ts';
import { blockDomain, unblockDomain } from '../graph/domainBlocks.ts';
import { bookmarkStatus } from '../interactions/favourites.ts';
import { addListMembers, createList, deleteList, removeListMembers } from '../lists/lists.ts';
import { resolveAccountByAcct, resolveRemote } from '../activitypub/resolve.ts';
import { findStatusByUri } from '../activitypub/ingress/statuses.ts';
import { parseAcct } from '../accounts/queries.ts';
import { exportAcct } from './exports.ts';

const LEASE_MS = 60_000;

/** A local or remote account named in a file: ours by name, others through WebFinger. */
async function accountOf(core: Core, acct: string | undefined): Promise<AccountDoc | null> {
  if (!acct) return null;
  const parsed = parseAcct(core, acct);
  if (!parsed) return null;
  if (parsed.domain === null)
    return collection(core.db, accounts).findOne({ usernameLower: parsed.username.toLowerCase(), domain: null });
  return resolveAccountByAcct(core, acct);
}

const rowKey = (core: Core, acct: string): string => {
  const parsed = parseAcct(core, acct);
  return parsed ? `${parsed.username.toLowerCase()}@${parsed.domain ?? ''}` : acct.toLowerCase();
};

/**
 * Overwrite mode (BulkImportService): what the account has that the file does not list is
 * removed; rows of what it already has are applied in place. Lists: lists not in the file go,
 * the others are emptied. Domain blocks are all applied here (they need no resolution).
 */
async function prepare(core: Core, imp: BulkImportDoc, account: AccountDoc): Promise<void> {
  const R = collection(core.db, bulkImportRows);
  const rows = await R.find({ importId: imp._id }).toArray();
  let done = 0;
  const accountsByIds = async (ids: Id[]) =>
    collection(core.db, accounts)
      .find({ _id: { $in: ids } })
      .toArray();
  const byAcct = new Map<string, BulkImportRowDoc>();
  for (const r of rows) if (r.data.acct) byAcct.set(rowKey(core, r.data.acct), r);
  const settle = async (row: BulkImportRowDoc) => {
    await R.deleteOne({ _id: row._id });
    done++;
  };
  switch (imp.type) {
    case 'following':
    case 'blocking':
    case 'muting': {
      if (!imp.overwrite) break;
      const coll = imp.type === 'following' ? follows : imp.type === 'blocking' ? blocks : mutes;
      const existing = await collection(core.db, coll as typeof follows)
        .find({ accountId: account._id })
        .toArray();
      for (const target of await accountsByIds(existing.map((e) => e.targetAccountId))) {
        const row = byAcct.get(rowKey(core, exportAcct(core, target)));
        if (!row) {
          if (imp.type === 'following') await unfollowAccount(core, account, target);
          else if (imp.type === 'blocking') await unblockAccount(core, account, target);
          else await unmuteAccount(core, account, target);
          continue;
        }
        await applyToAccount(core, imp.type, account, target, row.data).catch(() => undefined);
        await settle(row);
      }
      break;
    }
    case 'domain_blocking': {
      const domains = new Set(rows.map((r) => r.data.domain ?? '').filter(Boolean));
      if (imp.overwrite)
        for (const d of await collection(core.db, accountDomainBlocks).find({ accountId: account._id }).toArray())
          if (!domains.has(d.domain)) await unblockDomain(core, account, d.domain);
      for (const domain of domains) await blockDomain(core, account, domain).catch(() => undefined);
      await R.deleteMany({ importId: imp._id });
      done = rows.length;
      break;
    }
    case 'bookmarks': {
      if (!imp.overwrite) break;
      const byUri = new Map(rows.filter((r) => r.data.uri).map((r) => [r.data.uri as string, r]));
      const marks = await collection(core.db, bookmarks).find({ accountId: account._id }).toArray();
      const marked = await collection(core.db, statuses)
        .find({ _id: { $in: marks.map((m) => m.statusId) } }, { projection: { _id: 1, uri: 1 } })
        .toArray();
      const uriOf = new Map(marked.map((s) => [String(s._id), s.uri]));
      for (const m of marks) {
        const row = byUri.get(uriOf.get(String(m.statusId)) ?? '');
        if (!row) await collection(core.db, bookmarks).deleteOne({ _id: m._id });
        else await settle(row);
      }
      break;
    }
    case 'lists': {
      const titles = [...new Set(rows.map((r) => r.data.list_name ?? '').filter(Boolean))];
      const owned = await collection(core.db, lists).find({ accountId: account._id }).toArray();
      if (imp.overwrite)
        for (const list of owned) {
          if (!titles.includes(list.title)) await deleteList(core, list);
          else {
            const members = await collection(core.db, listMembers).find({ listId: list._id }).toArray();
            await removeListMembers(
              core,
              list,
              members.map((m) => m.accountId),
            );
          }
        }
      for (const title of titles)
        if (!owned.some((l) => l.title === title)) await createList(core, account, { title }).catch(() => undefined);
      break;
    }
  }
  await collection(core.db, bulkImports).updateOne(
    { _id: imp._id },
    { $set: { prepared: true }, $inc: { processedItems: done, importedItems: done } },
  );
}

async function applyToAccount(
  core: Core,
  type: 'following' | 'blocking' | 'muting',
  account: AccountDoc,
  target: AccountDoc,
  data: ImportRowData,
): Promise<void> {
  if (type === 'following')
    await followAccount(core, account, target, {
      reblogs: data.show_reblogs ?? true,
      notify: data.notify ?? false,
      languages: data.languages ?? null,
    });
  else if (type === 'blocking') await blockAccount(core, account, target);
  else await muteAccount(core, account, target, { notifications: data.hide_notifications ?? true });
}

/** One row (Import::RowService): whether it was imported. */
async function applyRow(core: Core, imp: BulkImportDoc, account: AccountDoc, data: ImportRowData): Promise<boolean> {
  switch (imp.type) {
    case 'following':
    case 'blocking':
    case 'muting': {
      const target = await accountOf(core, data.acct);
      if (!target || target._id === account._id) return false;
      await applyToAccount(core, imp.type, account, target, data);
      return true;
    }
    case 'bookmarks': {
      if (!data.uri || !/^https?:\/\//i.test(data.uri)) return false;
      const status = (await findStatusByUri(core, data.uri)) ?? (await resolveRemote(core, data.uri)).status;
      if (!status) return false;
      await bookmarkStatus(core, account, status);
      return true;
    }
    case 'lists': {
      const target = await accountOf(core, data.acct);
      const list = data.list_name
        ? await collection(core.db, lists).findOne({ accountId: account._id, title: data.list_name })
        : null;
      if (!target || !list || target._id === account._id) return false;
      // Members must be followed (Mastodon follows them first).
      const following = await collection(core.db, follows).countDocuments({
        accountId: account._id,
        targetAccountId: target._id,
      });
      if (!following && (await followAccount(core, account, target)) !== 'following') return false;
      await addListMembers(core, list, [target._id]);
      return true;
    }
    case 'domain_blocking':
      return false; // applied while preparing
  }
}

/**
 * The scheduler job: takes one scheduled or unfinished import whose lease ran out, processes up to
 * `batch` rows, and gives it back (or finishes it). Returns the rows handled.
 */
export async function processImports(core: Core, opts: { batch?: number } = {}): Promise<number> {
  const batch = opts.batch ?? 100;
  const now = new Date();
  const imp = await collection(core.db, bulkImports).findOneAndUpdate(
    { state: { $in: ['scheduled', 'in_progress'] }, $or: [{ leaseUntil: null }, { leaseUntil: { $lt: now } }] },
    { $set: { state: 'in_progress', leaseUntil: new Date(now.getTime() + LEASE_MS) } },
    { sort: { _id: 1 }, returnDocument: 'after' },
  );
  if (!imp) return 0;
  const account = await collection(core.db, accounts).findOne({ _id: imp.accountId });
  const I = collection(core.db, bulkImports);
  const R = collection(core.db, bulkImportRows);
  if (!account || account.suspendedAt) {
    await R.deleteMany({ importId: imp._id });
    await I.updateOne({ _id: imp._id }, { $set: { state: 'finished', finishedAt: new Date(), leaseUntil: null } });
    return 1;
  }
  if (!imp.prepared) await prepare(core, imp, account);
  const rows = await R.find({ importId: imp._id }).sort({ _id: 1 }).limit(batch).toArray();
  let imported = 0;
  for (const row of rows) {
    let ok = false;
    try {
      ok = await applyRow(core, imp, account, row.data);
    } catch (err) {
      // A refused row (blocked, suspended, unreachable) counts as processed, not imported.
      if (!(err instanceof ApiError)) core.logger.warn({ err, importId: String(imp._id) }, 'import row failed');
    }
    if (ok) imported++;
    await R.deleteOne({ _id: row._id });
  }
  const left = await R.countDocuments({ importId: imp._id });
  await I.updateOne(
    { _id: imp._id },
    {
      $inc: { processedItems: rows.length, importedItems: imported },
      $set: left === 0 ? { state: 'finished', finishedAt: new Date(), leaseUntil: null } : { leaseUntil: null },
    },
  );
  return Math.max(rows.length, 1);
}
