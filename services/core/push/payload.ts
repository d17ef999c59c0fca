// The JSON a Web Push message carries, as Mastodon's Web::NotificationSerializer writes it: the
// ids and type, a title in the recipient's words ("%{name} favorited your post"), a body of at most
// 140 characters (the status's content warning or text, else the sender's bio), the sender's static
// avatar as icon, the recipient's locale, and the subscription's own access token (the service
// worker uses it to act on the notification).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses } from '../model/statuses.ts';
import { users } from '../model/users.ts';
import { accessTokens } from '../model/oauth.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import type { PushSubscriptionDoc } from '../model/pushSubscriptions.ts';
import { unseal } from '../oauth/seal.ts';
import { plainText } from '../filters/match.ts';
import { profileImageUrls } from '../media/remoteProfileImages.ts';

export interface WebPushPayload {
  access_token: string;
  preferred_locale: string;
  notification_id: string;
  notification_type: string;
  icon: string;
  title: string;
  body: string;
}

/** The sender's static avatar as the API shows it (our copy, the media proxy, or the placeholder). */
function avatarStaticUrl(core: Core, a: AccountDoc): string {
  return profileImageUrls(core, a, 'avatar', '/avatars/original/missing.png')[1];
}

/** Mastodon's English notification_mailer.<type>.subject strings. */
const TITLES: Record<string, (name: string) => string> = {
  mention: (n) => `You were mentioned by ${n}`,
  status: (n) => `${n} just posted`,
  reblog: (n) => `${n} boosted your post`,
  follow: (n) => `${n} is now following you`,
  follow_request: (n) => `Pending follower: ${n}`,
  favourite: (n) => `${n} favorited your post`,
  poll: (n) => `A poll by ${n} has ended`,
  update: (n) => `${n} edited a post`,
  quote: (n) => `${n} quoted your post`,
  quoted_update: (n) => `${n} edited a post you have quoted`,
  'admin.sign_up': (n) => `${n} signed up`,
  'admin.report': (n) => `${n} submitted a report`,
};

export function pushTitle(type: string, from: Pick<AccountDoc, 'displayName' | 'username'>): string {
  const name = from.displayName.trim() || from.username;
  return (TITLES[type] ?? ((n: string) => `New notification from ${n}`))(name);
}

/** Truncated as Rails' `truncate(length: 140)`: at most 140 characters including the "...". */
export function truncateBody(text: string, length = 140): string {
  const chars = [...text.trim()];
  if (chars.length <= length) return chars.join('');
  return `${chars.slice(0, length - 3).join('')}...`;
}

/** The payload for one subscription; null when the token it belongs to cannot be handed back. */
export async function webPushPayload(
  core: Core,
  sub: PushSubscriptionDoc,
  n: NotificationDoc,
): Promise<WebPushPayload | null> {
  const [from, status, user, token] = await Promise.all([
    collection(core.db, accounts).findOne({ _id: n.fromAccountId }),
    n.statusId === null
      ? Promise.resolve(null)
      : collection(core.db, statuses).findOne({ _id: n.statusId }, { projection: { spoilerText: 1, content: 1 } }),
    collection(core.db, users).findOne({ _id: sub.userId }, { projection: { locale: 1 } }),
    collection(core.db, accessTokens).findOne({ _id: sub.accessTokenId }),
  ]);
  if (!from || !token || token.revokedAt || !token.tokenSealed) return null;
  const accessToken = unseal(core.config.secretKeyBase, token.tokenSealed);
  if (!accessToken) return null;
  const source = status ? status.spoilerText || plainText(status.content) : plainText(from.note ?? '');
  return {
    access_token: accessToken,
    preferred_locale: user?.locale ?? 'en',
    notification_id: String(n._id),
    notification_type: n.type,
    icon: avatarStaticUrl(core, from),
    title: pushTitle(n.type, from),
    body: truncateBody(source.replace(/\s+/g, ' ')),
  };
}
