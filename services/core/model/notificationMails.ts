// Notification e-mails waiting for their time (Mastodon sends each one `deliver_later(wait:
// 2.minutes)`): one per notification, removed once it is mailed or found unwanted. The scheduler
// claims due ones through `scheduler_claims`, as it does scheduled statuses.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface NotificationMailDoc {
  /** The notification's id: a notification is mailed at most once. */
  _id: Id;
  dueAt: Date;
  /** Claimed attempts so far; a crashed worker's mail is taken again once `claimedUntil` passed. */
  attempts: number;
  claimedUntil: Date | null;
}

export const notificationMails = defineCollection<NotificationMailDoc>('notification_mails', [
  { key: { dueAt: 1 }, name: 'due' },
]);
