// The notification reads of the v1 list and the v2 group endpoints: one notification of its owner,
// a filtered page, a group's members.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findPage, type PageParams } from '../db/pages.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { notificationQuery, type NotificationFilter } from './queries.ts';
import { groupMembersQuery } from './groupPages.ts';

/** The account's notification of that id, or null. */
export function findOwnNotification(core: Core, accountId: Id, id: Id): Promise<NotificationDoc | null> {
  return collection(core.db, notifications).findOne({ _id: id, accountId });
}

/** A page of the account's notifications under the list's filters, newest first. */
export function notificationsPage(
  core: Core,
  accountId: Id,
  filter: NotificationFilter,
  p: PageParams,
): Promise<NotificationDoc[]> {
  return findPage(collection(core.db, notifications), notificationQuery(accountId, filter), p);
}

/** The first `limit` notifications of a group (`ungrouped-<id>`: that one notification). */
export function groupMembers(core: Core, accountId: Id, groupKey: string, limit: number): Promise<NotificationDoc[]> {
  return collection(core.db, notifications).find(groupMembersQuery(accountId, groupKey)).limit(limit).toArray();
}

/** A page of a group's notifications (ids and senders only), newest first. */
export async function groupSendersPage(
  core: Core,
  accountId: Id,
  groupKey: string,
  p: PageParams,
): Promise<Array<Pick<NotificationDoc, '_id' | 'fromAccountId'>>> {
  return findPage(collection(core.db, notifications), groupMembersQuery(accountId, groupKey), p, '_id', {
    _id: 1,
    fromAccountId: 1,
  });
}
