// Web Push subscriptions: one per access token (a new one for the same token replaces it), deleted
// with the token and when the push service answers 404/410.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { NOTIFICATION_TYPES, type NotificationType } from './notifications.ts';

export const PUSH_POLICIES = ['all', 'followed', 'follower', 'none'] as const;
export type PushPolicy = (typeof PUSH_POLICIES)[number];

/** Notification types a subscription can ask alerts for (Mastodon's Notification::TYPES, less two). */
export const PUSH_ALERT_TYPES = NOTIFICATION_TYPES.filter(
  (t): t is Exclude<NotificationType, 'severed_relationships' | 'moderation_warning'> =>
    t !== 'severed_relationships' && t !== 'moderation_warning',
);

export interface PushSubscriptionDoc {
  _id: Id;
  accessTokenId: Id;
  userId: Id;
  accountId: Id;
  endpoint: string;
  /** Base64url P-256 public key and 16-byte auth secret of the browser's subscription. */
  keyP256dh: string;
  keyAuth: string;
  /** The client asked for RFC 8291 (aes128gcm) messages; they are always sent so. */
  standard: boolean;
  /** Alert switches by notification type; a type not set is off. */
  alerts: Record<string, boolean>;
  policy: PushPolicy;
  createdAt: Date;
  updatedAt: Date;
}

export const pushSubscriptions = defineCollection<PushSubscriptionDoc>('web_push_subscriptions', [
  { key: { accessTokenId: 1 }, name: 'access_token', unique: true },
  { key: { accountId: 1 }, name: 'account' },
]);
