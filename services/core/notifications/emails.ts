// E-mails for new notifications (Mastodon's NotifyService#send_email! and NotificationMailer):
// a mention, follow, follow request, favourite or boost that the recipient's policy let through
// (filtered ones send nothing), to a usable login that chose that kind of e-mail, and only while
// the recipient is not online (no streaming connection, no Web Push subscription) unless they
// chose `always_send_emails`. As Mastodon's `deliver_later(wait: 2.minutes)`, the mail is not
// requested at once: it waits in `notification_mails` for NOTIFICATION_EMAIL_DELAY seconds and is
// sent by the scheduler (dueEmails.ts) only if the notification is still there. A server without
// SMTP_SERVER asks for none (see Config.smtp.configured).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection, insertNew } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { pushSubscriptions } from '../model/pushSubscriptions.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { notificationMails } from '../model/notificationMails.ts';
import { listenedChannels, timelineChannels } from '../streaming/channels.ts';
import { NOTIFICATION_MAIL_TEMPLATES, type NotificationMailTemplate } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';

const MAILED = new Set<string>(NOTIFICATION_MAIL_TEMPLATES);
export const isMailed = (doc: NotificationDoc): doc is NotificationDoc & { type: NotificationMailTemplate } =>
  MAILED.has(doc.type);

/** Recipients with a streaming connection or a Web Push subscription (Mastodon's recipient_online?). */
async function onlineRecipients(core: Core, accountIds: Id[]): Promise<Set<Id>> {
  const channels = accountIds.flatMap((a) => [timelineChannels.user(a), timelineChannels.userNotifications(a)]);
  const heard = await listenedChannels(core.redis, core.config, channels);
  const online = new Set(accountIds.filter((_, i) => heard[2 * i] || heard[2 * i + 1]));
  const pushed = await collection(core.db, pushSubscriptions)
    .find({ accountId: { $in: accountIds.filter((a) => !online.has(a)) } }, { projection: { accountId: 1 } })
    .toArray();
  for (const s of pushed) online.add(s.accountId);
  return online;
}

/** A login that may get mail (the user half of Mastodon's User#functional?). */
export const functionalUser = (u: UserDoc) => u.confirmedAt !== null && u.approved && !u.disabled;

/** Schedules the e-mails the new notifications call for; returns how many. */
export async function mailNotifications(core: Core, docs: readonly NotificationDoc[]): Promise<number> {
  if (!core.config.smtp.configured) return 0;
  const candidates = docs.filter((d) => !d.filtered).filter(isMailed);
  if (candidates.length === 0) return 0;
  const recipientIds = [...new Set(candidates.map((d) => d.accountId))];
  const logins = new Map(
    (
      await collection(core.db, users)
        .find({ accountId: { $in: recipientIds } })
        .toArray()
    ).map((u) => [u.accountId, u]),
  );
  const wanted = candidates.filter((d) => {
    const user = logins.get(d.accountId);
    return user !== undefined && functionalUser(user) && wantsEmail(user, d.type);
  });
  if (wanted.length === 0) return 0;
  const online = await onlineRecipients(core, [
    ...new Set(wanted.filter((d) => !logins.get(d.accountId)?.settings.alwaysSendEmails).map((d) => d.accountId)),
  ]);
  const toSend = wanted.filter((d) => !online.has(d.accountId));
  if (toSend.length === 0) return 0;

  const dueAt = new Date(Date.now() + core.config.smtp.notificationDelaySeconds * 1000);
  // A notification handled twice (at-least-once events) keeps its first scheduled mail.
  const scheduled = await insertNew(
    collection(core.db, notificationMails),
    toSend.map((d) => ({ _id: d._id, dueAt, attempts: 0, claimedUntil: null })),
  );
  return scheduled.length;
}
