// Keeps the status search index in step with MongoDB: what the `search-index` pipeline does for
// each status event, what a bookmark adds, and a full rebuild from the statuses collection.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, accountView, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { newStatuses } from '../statuses/recentlyPosted.ts';
import { readThrough } from '../db/docCache.ts';
import { indexStatus, indexStatusInto, publiclySearchable, unindexStatus } from './statusIndex.ts';
import { batch } from '../db/redis.ts';

async function localAccountIds(core: Core, ids: readonly Id[]): Promise<Id[]> {
  if (ids.length === 0) return [];
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: [...new Set(ids)] }, domain: null }, { projection: { _id: 1 } })
    .toArray();
  return found.map((a) => a._id);
}

async function author(core: Core, status: StatusDoc): Promise<Pick<AccountDoc, '_id' | 'indexable' | 'domain'> | null> {
  return collection(core.db, accounts).findOne(
    { _id: status.accountId },
    { projection: { _id: 1, indexable: 1, domain: 1 } },
  );
}

/**
 * New or edited posts (a consumer's batch) into the public scope when they qualify, and into their
 * local authors' and local mentioned accounts' scopes: one read of the statuses (none for those
 * this process just posted), one of their authors and mentioned accounts, one Redis round trip.
 */
export async function indexPosts(core: Core, statusIds: readonly Id[]): Promise<void> {
  if (statusIds.length === 0) return;
  const docs = (await newStatuses(core, statusIds)).filter((s) => !s.deletedAt && s.reblogOfId === null);
  if (docs.length === 0) return;
  // Through the document cache: the authors were just refilled after their posts' counters.
  const byId = await readThrough(
    core,
    accountView,
    docs.flatMap((s) => [s.accountId, ...s.mentionedAccountIds]),
  );
  const pipe = batch(core.redis);
  for (const status of docs) {
    const by = byId.get(status.accountId);
    if (!by) continue;
    const mentioned = [...new Set(status.mentionedAccountIds)].filter((m) => byId.get(m)?.domain === null);
    const scopes = by.domain === null ? [by._id, ...mentioned] : mentioned;
    indexStatusInto(pipe, status, { isPublic: publiclySearchable(status, by), accounts: scopes });
  }
  await pipe.exec();
}

/** A deleted post leaves the public scope and its author's and mentioned accounts' scopes. */
export async function unindexPost(core: Core, statusId: Id): Promise<void> {
  const status = await collection(core.db, statuses).findOne({ _id: statusId });
  if (!status) return;
  await unindexStatus(core.redis, status, [status.accountId, ...status.mentionedAccountIds]);
}

/** A status a local account interacted with (favourite, boost, bookmark) becomes searchable for it. */
export async function indexForAccount(core: Core, accountId: Id, statusId: Id): Promise<void> {
  const [local] = await localAccountIds(core, [accountId]);
  if (local === undefined) return;
  const status = await collection(core.db, statuses).findOne({ _id: statusId });
  if (!status || status.deletedAt || status.reblogOfId !== null) return;
  await indexStatus(core.redis, status, { isPublic: false, accounts: [local] });
}

/** Re-indexes every live post (after a Redis loss, or to pick up `indexable` changes). */
export async function rebuildStatusIndex(core: Core, onProgress?: (n: number) => void): Promise<number> {
  let n = 0;
  const authors = new Map<bigint, Pick<AccountDoc, '_id' | 'indexable' | 'domain'> | null>();
  const cursor = collection(core.db, statuses).find({ deletedAt: null, reblogOfId: null });
  for await (const status of cursor) {
    let by = authors.get(status.accountId);
    if (by === undefined) {
      by = await author(core, status);
      if (authors.size > 100_000) authors.clear();
      authors.set(status.accountId, by);
    }
    if (!by) continue;
    const mentioned = await localAccountIds(core, status.mentionedAccountIds);
    const scopes = by.domain === null ? [by._id, ...mentioned] : mentioned;
    await indexStatus(core.redis, status, { isPublic: publiclySearchable(status, by), accounts: scopes });
    if (++n % 10_000 === 0) onProgress?.(n);
  }
  return n;
}

/**
 * An account switched `indexable`: its public posts enter or leave the public scope (the read-back
 * check already hides them from strangers while this runs).
 */
export async function reindexAccountPosts(
  core: Core,
  accountId: Id,
  onProgress?: () => Promise<void>,
): Promise<number> {
  const by = await collection(core.db, accounts).findOne(
    { _id: accountId },
    { projection: { _id: 1, indexable: 1, domain: 1 } },
  );
  if (!by) return 0;
  let n = 0;
  const cursor = collection(core.db, statuses).find({ accountId, deletedAt: null, reblogOfId: null });
  for await (const status of cursor) {
    if (status.visibility !== 'public') continue;
    if (publiclySearchable(status, by)) await indexStatus(core.redis, status, { isPublic: true, accounts: [] });
    else await unindexStatus(core.redis, status, [], { publicScope: true });
    if (++n % 500 === 0) await onProgress?.();
  }
  return n;
}
