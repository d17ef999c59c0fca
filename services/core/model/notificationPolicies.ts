// Notification policies (Mastodon 4.3): per account, what to do with notifications from accounts
// the user does not follow, that do not follow them (or only since less than 3 days), that are new
// (under 30 days), that are limited by moderators, and with unsolicited private mentions:
// accept, filter (into a notification request) or drop. Requests gather the filtered
// notifications per sender; permissions are the senders whose request was accepted.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export const POLICY_VALUES = ['accept', 'filter', 'drop'] as const;
export type PolicyValue = (typeof POLICY_VALUES)[number];

export interface NotificationPolicyDoc {
  /** The account's id. */
  _id: Id;
  forNotFollowing: PolicyValue;
  forNotFollowers: PolicyValue;
  forNewAccounts: PolicyValue;
  forPrivateMentions: PolicyValue;
  forLimitedAccounts: PolicyValue;
  updatedAt: Date;
}

export const DEFAULT_POLICY: Omit<NotificationPolicyDoc, '_id' | 'updatedAt'> = {
  forNotFollowing: 'accept',
  forNotFollowers: 'accept',
  forNewAccounts: 'accept',
  forPrivateMentions: 'filter',
  forLimitedAccounts: 'filter',
};

export const notificationPolicies = defineCollection<NotificationPolicyDoc>('notification_policies');

export interface NotificationRequestDoc extends AccountRecordDoc {
  fromAccountId: Id;
  /** The newest filtered notification's status, if it had one. */
  lastStatusId: Id | null;
  notificationsCount: number;
  updatedAt: Date;
}

export const notificationRequests = defineCollection<NotificationRequestDoc>(
  'notification_requests',
  accountRecordIndexes('fromAccountId', { unique: 'account_from', newestFirst: 'account_id' }),
);

export interface NotificationPermissionDoc extends AccountRecordDoc {
  fromAccountId: Id;
}

export const notificationPermissions = defineCollection<NotificationPermissionDoc>('notification_permissions', [
  { key: { accountId: 1, fromAccountId: 1 }, name: 'account_from', unique: true },
]);
