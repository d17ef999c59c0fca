// Deleting a status (soft: `deletedAt`), with its reblogs, pins and counters. Returns the status as
// it was, so the API can hand its source back for "delete and redraft".
import { dropViewerFlags } from '../interactions/viewerFlags.ts';
import { invalidateRenderedStatuses } from './renderCache.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { accounts } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { pins } from '../model/pins.ts';
import { statusNotFound } from './errors.ts';
import { reblogDeletedEvent, statusDeletedEvent } from './events.ts';
import { quotedStatusDeleted, quotingStatusDeleted } from '../quotes/quotes.ts';
import { countOnce } from '../db/countOnce.ts';
import { countedParentOf, incrementCounts, tally } from './statusCounts.ts';

export async function deleteStatus(core: Core, author: AccountDoc, statusId: Id): Promise<StatusDoc> {
  const status = await collection(core.db, statuses).findOne({ _id: statusId, deletedAt: null });
  if (!status || status.accountId !== author._id) throw statusNotFound();
  if (status.reblogOfId !== null) {
    await removeReblog(core, status);
    return status;
  }
  await deleteStatusDocs(core, [status]);
  return status;
}

/**
 * Deletes statuses (not reblogs) whose author the caller checked: one outbox write for all, each
 * status's own conditional update (a counter moves only for a status this call deleted), the
 * counters in one bulk write per collection, then their reblogs. The one path of deleteStatus and
 * of the ingress batch's Deletes.
 */
export async function deleteStatusDocs(core: Core, list: StatusDoc[]): Promise<void> {
  if (list.length === 0) return;
  const deletedAt = new Date();
  await core.outbox.write(
    list.map((s) => statusDeletedEvent(s, deletedAt)),
    async () => {
      const removed = (
        await Promise.all(
          list.map(
            async (s) =>
              (
                await collection(core.db, statuses).updateOne(
                  { _id: s._id, deletedAt: null },
                  { $set: { deletedAt, updatedAt: deletedAt } },
                )
              ).modifiedCount > 0,
          ),
        )
      ).flatMap((done, k) => (done ? [list[k]!] : []));
      if (removed.length === 0) return;
      const repliedTo = removed.map(countedParentOf).filter((id) => id !== null);
      await Promise.all([
        ...removed.map((s) => quotingStatusDeleted(core, s)),
        collection(core.db, pins).deleteMany(
          removed.length === 1 ? { statusId: removed[0]!._id } : { statusId: { $in: removed.map((s) => s._id) } },
        ),
        countOnce(
          collection(core.db, accounts),
          removed
            .filter((s) => s.visibility !== 'direct')
            .map((s) => ({ _id: s.accountId, inc: { statusesCount: -1 }, mark: `s-${s._id}` })),
        ),
        incrementCounts(collection(core.db, statuses), 'repliesCount', tally(repliedTo), -1),
      ]);
    },
  );
  const ids = list.map((s) => s._id);
  await invalidateRenderedStatuses(core, ids);
  await Promise.all(list.map((s) => quotedStatusDeleted(core, s)));
  // Reblogs go with their original.
  const reblogs = await collection(core.db, statuses)
    .find({ reblogOfId: ids.length === 1 ? ids[0]! : { $in: ids }, deletedAt: null })
    .toArray();
  for (const reblog of reblogs) await removeReblog(core, reblog);
}

/** Removes a reblog (unreblog, or its original went away); frees its unique key. */
export async function removeReblog(core: Core, reblog: StatusDoc): Promise<boolean> {
  const deletedAt = new Date();
  let removed = false;
  await core.outbox.write([reblogDeletedEvent(reblog)], async () => {
    const res = await collection(core.db, statuses).updateOne(
      { _id: reblog._id, deletedAt: null },
      { $set: { deletedAt, updatedAt: deletedAt, uniqueKey: `d:${reblog._id}` } },
    );
    removed = res.modifiedCount > 0;
    if (!removed) return;
    if (reblog.reblogOfId)
      await collection(core.db, statuses).updateOne({ _id: reblog.reblogOfId }, { $inc: { reblogsCount: -1 } });
    if (reblog.visibility !== 'direct')
      await countOnce(collection(core.db, accounts), [
        { _id: reblog.accountId, inc: { statusesCount: -1 }, mark: `s-${reblog._id}` },
      ]);
  });
  await dropViewerFlags(core, reblog.accountId);
  return removed;
}
