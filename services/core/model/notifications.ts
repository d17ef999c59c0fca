// Notifications: one document per (type, from account, recipient, status), made unique by
// `uniqueKey` so a redelivered event never duplicates one. `groupKey` is Mastodon's grouping key
// (favourite/reblog of one status, follows, within a time window; `ungrouped-<id>` otherwise).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export const NOTIFICATION_TYPES = [
  'mention',
  'status',
  'reblog',
  'follow',
  'follow_request',
  'favourite',
  'poll',
  'update',
  'admin.sign_up',
  'admin.report',
  'severed_relationships',
  'moderation_warning',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Types grouped in /api/v2/notifications by default (Mastodon 4.3). */
export const GROUPABLE_TYPES: readonly NotificationType[] = ['favourite', 'reblog', 'follow'];

export interface NotificationDoc {
  _id: Id;
  /** The recipient (a local account). */
  accountId: Id;
  fromAccountId: Id;
  type: NotificationType;
  /** The status it is about (for a reblog: the reblogged original). */
  statusId: Id | null;
  /** `type:from:to:status[:variant]`, unique. */
  uniqueKey: string;
  /** `admin.report`: the report. */
  reportId?: Id | null;
  /** `moderation_warning`: the strike. */
  warningId?: Id | null;
  groupKey: string;
  /** Held back by the recipient's notification policy (a notification request); absent = false. */
  filtered?: boolean;
  createdAt: Date;
}

export const notifications = defineCollection<NotificationDoc>('notifications', [
  { key: { uniqueKey: 1 }, name: 'unique_key', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account_id' },
  { key: { accountId: 1, groupKey: 1, _id: -1 }, name: 'account_group' },
  { key: { accountId: 1, fromAccountId: 1, _id: -1 }, name: 'account_from' },
  { key: { statusId: 1 }, name: 'status' },
]);
