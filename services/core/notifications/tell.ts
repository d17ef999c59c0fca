// What follows a new notification: its recipient's streams get it (filtered ones stay quiet), and
// an e-mail is asked for where the recipient chose one. Every path that creates notifications —
// the notifications pipeline and the federation ingress (quotes, collections) — ends here.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { presentNotifications } from '../entities/notification.ts';
import { listenedChannels, publishToStream, timelineChannels } from '../streaming/channels.ts';
import { createNotifications, type NotificationRequest } from './notify.ts';
import { mailNotifications } from './emails.ts';

/** Sends new notifications to their recipients' streams (filtered ones stay quiet). */
export async function publishNotifications(core: Core, docs: readonly NotificationDoc[]): Promise<void> {
  const shown = docs.filter((d) => !d.filtered);
  if (shown.length === 0) return;
  // Rendering costs a score of queries: skip it when no streaming server listens (as Mastodon
  // checks its subscribed:timeline:<id> keys), asking for every recipient in one round trip. Both
  // the `user` and the `user:notification` stream listen on this channel.
  const recipients = [...new Set(shown.map((d) => d.accountId))];
  const heard = await listenedChannels(
    core.redis,
    core.config,
    recipients.map((a) => timelineChannels.userNotifications(a)),
  );
  const listened = new Set(recipients.filter((_, i) => heard[i]));
  const viewers = new Map<Id, AccountDoc | null>();
  for (const doc of shown) {
    if (!listened.has(doc.accountId)) continue;
    if (!viewers.has(doc.accountId))
      viewers.set(doc.accountId, await collection(core.db, accounts).findOne({ _id: doc.accountId }));
    const viewer = viewers.get(doc.accountId);
    if (!viewer) continue;
    const [rendered] = await presentNotifications(core, [doc], viewer);
    if (!rendered) continue;
    // Only on timeline:<id>:notifications, as Mastodon: the `user` stream listens to that channel
    // too, so publishing on timeline:<id> as well would deliver it twice there.
    const message = { event: 'notification' as const, payload: JSON.stringify(rendered) };
    await publishToStream(core.redis, core.config, timelineChannels.userNotifications(doc.accountId), message);
  }
}

/** Creates the notifications of a batch of requests, streams the new ones and asks for their e-mails. */
export async function notifyAndTell(core: Core, rs: readonly NotificationRequest[]): Promise<NotificationDoc[]> {
  if (rs.length === 0) return [];
  const docs = await createNotifications(core, rs);
  await publishNotifications(core, docs);
  await mailNotifications(core, docs);
  return docs;
}
