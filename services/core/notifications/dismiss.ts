// A user dismissing one of their notifications (v1 dismiss, and v2's for an ungrouped one).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { removeFromGroup } from './groups.ts';

/** Deletes `doc` if it is still `accountId`'s; only the caller that deleted it takes it out of its group. */
export async function dismissNotification(core: Core, accountId: Id, doc: NotificationDoc): Promise<void> {
  const res = await collection(core.db, notifications).deleteOne({ _id: doc._id, accountId });
  if (res.deletedCount === 1) await removeFromGroup(core, doc);
}
