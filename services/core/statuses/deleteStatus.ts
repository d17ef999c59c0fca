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

export async function deleteStatus(core: Core, author: AccountDoc, statusId: Id): Promise<StatusDoc> {
  const status = await collection(core.db, statuses).findOne({ _id: statusId, deletedAt: null });
  if (!status || status.accountId !== author._id) throw statusNotFound();
  if (status.reblogOfId !== null) {
    await removeReblog(core, status);
    return status;
  }
  const deletedAt = new Date();
  await core.outbox.write([statusDeletedEvent(status, deletedAt)], async () => {
    const res = await collection(core.db, statuses).updateOne(
      { _id: status._id, deletedAt: null },
      { $set: { deletedAt, updatedAt: deletedAt } },
    );
    if (res.modifiedCount === 0) return;
    await quotingStatusDeleted(core, status);
    await collection(core.db, pins).deleteMany({ statusId: status._id });
    if (status.visibility !== 'direct')
      await collection(core.db, accounts).updateOne({ _id: status.accountId }, { $inc: { statusesCount: -1 } });
    if (status.inReplyToId && (status.visibility === 'public' || status.visibility === 'unlisted')) {
      await collection(core.db, statuses).updateOne({ _id: status.inReplyToId }, { $inc: { repliesCount: -1 } });
    }
  });
  await invalidateRenderedStatuses(core, [status._id]);
  await quotedStatusDeleted(core, status);
  // Reblogs go with their original.
  const reblogs = await collection(core.db, statuses).find({ reblogOfId: status._id, deletedAt: null }).toArray();
  for (const reblog of reblogs) await removeReblog(core, reblog);
  return status;
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
      await collection(core.db, accounts).updateOne({ _id: reblog.accountId }, { $inc: { statusesCount: -1 } });
  });
  await dropViewerFlags(core, reblog.accountId);
  return removed;
}
