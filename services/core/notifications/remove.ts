// Removing the notifications of undone activities: in Mastodon a notification belongs to its
// activity (Follow, Favourite, reblog Status, Mention) and is destroyed with it, so an unfollow,
// unfavourite, unreblog or the deletion of a status takes its notifications away, out of the
// list, the unread count, the group summaries and the sender's notification request.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { notificationRequests } from '../model/notificationPolicies.ts';
import { removeFromGroup } from './groups.ts';
import { notificationUniqueKey } from './notify.ts';
import { MAX_MEANINGFUL_COUNT } from './requests.ts';

/**
 * Deletes the notifications matching `filter` (served by an index), one at a time so that only
 * the caller that deleted a notification takes it out of its group summary. Returns how many.
 */
export async function removeNotifications(core: Core, filter: Filter<NotificationDoc>): Promise<number> {
  const coll = collection(core.db, notifications);
  const found = await coll.find(filter).toArray();
  let removed = 0;
  const requests = new Map<string, { accountId: Id; fromAccountId: Id }>();
  for (const doc of found) {
    const res = await coll.deleteOne({ _id: doc._id });
    if (res.deletedCount !== 1) continue;
    removed++;
    if (doc.filtered) {
      if (doc.type === 'mention')
        requests.set(`${doc.accountId}:${doc.fromAccountId}`, {
          accountId: doc.accountId,
          fromAccountId: doc.fromAccountId,
        });
    } else await removeFromGroup(core, doc);
  }
  for (const key of requests.values()) await recountRequest(core, key.accountId, key.fromAccountId);
  return removed;
}

/** A notification request counts its filtered mentions: recount, or drop it when none is left. */
async function recountRequest(core: Core, accountId: Id, fromAccountId: Id): Promise<void> {
  const count = await collection(core.db, notifications).countDocuments(
    { accountId, fromAccountId, filtered: true, type: 'mention' },
    { limit: MAX_MEANINGFUL_COUNT },
  );
  const coll = collection(core.db, notificationRequests);
  if (count === 0) await coll.deleteOne({ accountId, fromAccountId });
  else await coll.updateOne({ accountId, fromAccountId }, { $set: { notificationsCount: count } });
}

/**
 * The `follow` (or, for a pending request, `follow_request`) notification of the follow that
 * ended, found by its unique key (which names the follow), so that the end of an old follow never
 * takes the notification of a newer one whose event was handled first. The key without a follow
 * id is that of notifications stored before keys named their follow.
 */
export function removeFollowNotification(
  core: Core,
  p: { followerId: Id; followedId: Id; followId: string; pending: boolean },
): Promise<number> {
  const r = {
    type: p.pending ? ('follow_request' as const) : ('follow' as const),
    accountId: p.followedId,
    fromAccountId: p.followerId,
  };
  return removeNotifications(core, {
    uniqueKey: { $in: [notificationUniqueKey({ ...r, variant: p.followId }), notificationUniqueKey(r)] },
  });
}

/** The `favourite` or `reblog` notification of an interaction undone by `fromAccountId`. */
export function removeInteractionNotification(
  core: Core,
  p: { type: 'favourite' | 'reblog'; recipientId: Id; fromAccountId: Id; statusId: Id },
): Promise<number> {
  return removeNotifications(core, {
    accountId: p.recipientId,
    fromAccountId: p.fromAccountId,
    type: p.type,
    statusId: p.statusId,
  });
}

/** Every notification about a deleted status (mentions, favourites, reblogs, edits, polls, posts). */
export function removeStatusNotifications(core: Core, statusId: Id): Promise<number> {
  return removeNotifications(core, { statusId });
}
