// One-click unsubscribe from notification e-mails (Mastodon 4.3's MailSubscriptionsController and
// the `List-Unsubscribe` headers of NotificationMailer). The link carries a token signed with
// SECRET_KEY_BASE for the purpose "unsubscribe" (Mastodon: `user.to_sgid(for: 'unsubscribe')`,
// which expires after a month), so it works without a session and cannot be forged or reused for
// another user.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Core } from '../context.ts';
import { parseId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { NOTIFICATION_MAIL_TEMPLATES, type NotificationMailTemplate } from '../mail/request.ts';
import { updateNotificationEmails } from './notificationEmails.ts';

/** Rails' SignedGlobalID default lifetime. */
const LIFETIME_SECONDS = 30 * 24 * 3600;

function signature(core: Core, payload: string): string {
  return createHmac('sha256', `${core.config.secretKeyBase}:unsubscribe`).update(payload).digest('base64url');
}

/** The signed token of a user's unsubscribe links. */
export function unsubscribeToken(core: Core, userId: Id, now = Date.now()): string {
  const payload = Buffer.from(`${userId}.${Math.floor(now / 1000) + LIFETIME_SECONDS}`).toString('base64url');
  return `${payload}--${signature(core, payload)}`;
}

/** The link of a notification e-mail's footer and `List-Unsubscribe` header. */
export function unsubscribeUrl(core: Core, userId: Id, type: NotificationMailTemplate): string {
  const query = new URLSearchParams({ token: unsubscribeToken(core, userId), type });
  return `${core.config.baseUrl}/unsubscribe?${query.toString()}`;
}

/** The e-mail types one can unsubscribe from (Mastodon's list: the notification mails). */
export function unsubscribeType(type: string): NotificationMailTemplate | null {
  return (NOTIFICATION_MAIL_TEMPLATES as readonly string[]).includes(type) ? (type as NotificationMailTemplate) : null;
}

/** The user a token was made for; null when it is forged, malformed, expired or the user is gone. */
export async function unsubscribingUser(core: Core, token: string, now = Date.now()): Promise<UserDoc | null> {
  const m = /^([A-Za-z0-9_-]{1,200})--([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const expected = Buffer.from(signature(core, m[1]));
  const given = Buffer.from(m[2]);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const [idText, expiresText] = Buffer.from(m[1], 'base64url').toString('utf8').split('.');
  const userId = parseId(idText);
  if (userId === null || !(Number(expiresText) * 1000 > now)) return null;
  return collection(core.db, users).findOne({ _id: userId });
}

/** Turns the given e-mail type off for the token's user; null when the token is not valid. */
export async function unsubscribe(core: Core, token: string, type: NotificationMailTemplate): Promise<UserDoc | null> {
  const user = await unsubscribingUser(core, token);
  if (!user) return null;
  await updateNotificationEmails(core, user._id, { [type]: false });
  return user;
}
