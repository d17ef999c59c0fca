// E-mail notification choices (Mastodon's `notification_emails.*` user settings, "E-mail me
// when…" on /settings/preferences/notifications) and `always_send_emails`. Stored under
// `settings.notificationEmails` of the user; a key not stored has Mastodon's default.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import type { Permission } from '../roles/permissions.ts';
import { userCan } from '../roles/roles.ts';

export const NOTIFICATION_EMAIL_KEYS = [
  'follow',
  'follow_request',
  'reblog',
  'favourite',
  'mention',
  'report',
  'pending_account',
  'trends',
  'appeal',
] as const;
export type NotificationEmailKey = (typeof NOTIFICATION_EMAIL_KEYS)[number];
export type NotificationEmails = Record<NotificationEmailKey, boolean>;

/** Mastodon's UserSettings defaults: boosts and favourites are off, everything else on. */
export const NOTIFICATION_EMAIL_DEFAULTS: NotificationEmails = {
  follow: true,
  follow_request: true,
  reblog: false,
  favourite: false,
  mention: true,
  report: true,
  pending_account: true,
  trends: true,
  appeal: true,
};

/** The staff choices and the permission that makes each one matter (as Mastodon's form shows them). */
export const STAFF_EMAIL_PERMISSIONS: Partial<Record<NotificationEmailKey, Permission>> = {
  report: 'manage_reports',
  pending_account: 'manage_users',
  trends: 'manage_taxonomies',
};

type EmailSettings = Pick<UserDoc['settings'], 'notificationEmails' | 'alwaysSendEmails'>;

export function notificationEmailsOf(user: { settings: EmailSettings }): NotificationEmails {
  return { ...NOTIFICATION_EMAIL_DEFAULTS, ...user.settings.notificationEmails };
}

export function wantsEmail(user: { settings: EmailSettings }, key: NotificationEmailKey): boolean {
  return notificationEmailsOf(user)[key];
}

/** The keys a user is offered: everyone's, and the staff ones their role makes useful. */
export async function offeredEmailKeys(core: Core, user: UserDoc): Promise<NotificationEmailKey[]> {
  const offered: NotificationEmailKey[] = [];
  for (const key of NOTIFICATION_EMAIL_KEYS) {
    const permission = STAFF_EMAIL_PERMISSIONS[key];
    // Nothing sends it yet (no appeals here): no choice that does nothing.
    if (key === 'appeal') continue;
    if (!permission || (await userCan(core, user, permission))) offered.push(key);
  }
  return offered;
}

/** Sets the given choices (keys not given keep their value); returns the updated user. */
export async function updateNotificationEmails(
  core: Core,
  userId: Id,
  changes: Partial<NotificationEmails>,
  alwaysSendEmails?: boolean,
): Promise<UserDoc | null> {
  const set: Record<string, boolean | Date> = { updatedAt: new Date() };
  for (const key of NOTIFICATION_EMAIL_KEYS)
    if (changes[key] !== undefined) set[`settings.notificationEmails.${key}`] = changes[key];
  if (alwaysSendEmails !== undefined) set['settings.alwaysSendEmails'] = alwaysSendEmails;
  return collection(core.db, users).findOneAndUpdate({ _id: userId }, { $set: set }, { returnDocument: 'after' });
}
