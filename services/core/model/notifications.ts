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
  // Mastodon 4.5: someone quoted your post; a post you quoted was edited.
  'quote',
  'quoted_update',
  // Mastodon 4.6: you were featured in a collection; a collection featuring you changed.
  'added_to_collection',
  'collection_update',
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
  /** `added_to_collection`, `collection_update`: the collection. */
  collectionId?: Id | null;
  groupKey: string;
  /** Held back by the recipient's notification policy (a notification request); absent = false. */
  filtered?: boolean;
  /**
   * Set while the notification is not yet counted in its group summary (between its insert and the
   * summary update): a redelivered event that finds it still set after a crash rebuilds the group.
   */
  grouping?: boolean;
  createdAt: Date;
}

export const notifications = defineCollection<NotificationDoc>('notifications', [
  { key: { uniqueKey: 1 }, name: 'unique_key', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account_id' },
  { key: { accountId: 1, groupKey: 1, _id: -1 }, name: 'account_group' },
  { key: { accountId: 1, fromAccountId: 1, _id: -1 }, name: 'account_from' },
  { key: { statusId: 1 }, name: 'status' },
  { key: { accountId: 1, type: 1, _id: -1 }, name: 'account_type' },
]);

/** One of a group's newest notifications: its id and sender (`sample_account_ids`). */
export interface GroupSample {
  id: Id;
  from: Id;
}

/**
 * The summary of one notification group of one recipient, kept by the notifications pipeline so
 * that /api/v2/notifications reads one document per group instead of the group's notifications.
 * Only browsable notifications (not `filtered`) are summarised. Notifications of types that are
 * not grouped have a summary of their own (`ungrouped-<id>`, count 1), so a page of groups is one
 * range read over the summaries ordered by `lastId`.
 */
export interface NotificationGroupDoc {
  /** `<accountId>:<groupKey>`. */
  _id: string;
  accountId: Id;
  groupKey: string;
  type: NotificationType;
  statusId: Id | null;
  /** Notifications in the group (`notifications_count`). */
  count: number;
  /** The oldest and newest notification ids in the group. */
  firstId: Id;
  lastId: Id;
  /** When the newest notification was created (`latest_page_notification_at`). */
  lastAt: Date;
  /** Up to 8 newest notifications, newest first (`sample_account_ids`). */
  samples: GroupSample[];
}

export const SAMPLE_ACCOUNTS_SIZE = 8;

export function groupDocId(accountId: Id, groupKey: string): string {
  return `${accountId}:${groupKey}`;
}

export const notificationGroups = defineCollection<NotificationGroupDoc>('notification_groups', [
  { key: { accountId: 1, lastId: -1 }, name: 'account_last' },
  { key: { accountId: 1, firstId: -1 }, name: 'account_first' },
]);
