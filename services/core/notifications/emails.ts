// E-mails for new notifications (Mastodon's NotifyService#send_email! and NotificationMailer):
// a mention, follow, follow request, favourite or boost that the recipient's policy let through
// (filtered ones send nothing), to a usable login that chose that kind of e-mail, and only while
// the recipient is not online (no streaming connection, no Web Push subscription) unless they
// chose `always_send_emails`. The mails go to the mailer pipeline as `MailRequested` events; a
// server without SMTP_SERVER requests none (see Config.smtp.configured).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { pushSubscriptions } from '../model/pushSubscriptions.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { listenedChannels, timelineChannels } from '../streaming/channels.ts';
import { acctOf } from '../entities/account.ts';
import { plainText } from '../filters/match.ts';
import { mailRequestedEvent, NOTIFICATION_MAIL_TEMPLATES, type NotificationMailTemplate } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';

const MAILED = new Set<string>(NOTIFICATION_MAIL_TEMPLATES);
const isMailed = (doc: NotificationDoc): doc is NotificationDoc & { type: NotificationMailTemplate } =>
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

const functional = (u: UserDoc) => u.confirmedAt !== null && u.approved && !u.disabled;

function statusSummary(status: StatusDoc): string {
  // A content warning hides the post in the e-mail as it does in the apps.
  if (status.spoilerText) return `Content warning: ${status.spoilerText}`;
  return (status.text || plainText(status.content)).trim();
}

/** Asks the mailer for the e-mails the new notifications call for; returns how many. */
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
    return user !== undefined && functional(user) && wantsEmail(user, d.type);
  });
  if (wanted.length === 0) return 0;
  const online = await onlineRecipients(core, [
    ...new Set(wanted.filter((d) => !logins.get(d.accountId)?.settings.alwaysSendEmails).map((d) => d.accountId)),
  ]);
  const toSend = wanted.filter((d) => !online.has(d.accountId));
  if (toSend.length === 0) return 0;

  const accountIds = [...new Set(toSend.flatMap((d) => [d.accountId, d.fromAccountId]))];
  const statusIds = [...new Set(toSend.flatMap((d) => (d.statusId === null ? [] : [d.statusId])))];
  const [accountDocs, statusDocs] = await Promise.all([
    collection(core.db, accounts)
      .find({ _id: { $in: accountIds } })
      .toArray(),
    statusIds.length
      ? collection(core.db, statuses)
          .find({ _id: { $in: statusIds }, deletedAt: null })
          .toArray()
      : Promise.resolve([]),
  ]);
  const byId = new Map<Id, AccountDoc>(accountDocs.map((a) => [a._id, a]));
  const statusById = new Map<Id, StatusDoc>(statusDocs.map((s) => [s._id, s]));

  const events = [];
  for (const doc of toSend) {
    const user = logins.get(doc.accountId);
    const recipient = byId.get(doc.accountId);
    const from = byId.get(doc.fromAccountId);
    const status = doc.statusId === null ? null : statusById.get(doc.statusId);
    if (!user || !recipient || !from || status === undefined) continue; // gone since
    events.push(
      mailRequestedEvent(
        {
          to: user.email,
          template: doc.type,
          key: String(user._id),
          variables: {
            instance: core.config.localDomain,
            username: recipient.username,
            name: acctOf(from),
            ...(status ? { status: statusSummary(status) } : {}),
            link: status ? (status.url ?? status.uri) : from.url,
            preferences: `${core.config.baseUrl}/settings/preferences/notifications`,
          },
        },
        // Not recorded in the outbox (publishDirect): the notification already exists.
        { collection: 'notifications', filter: { _id: doc._id }, expect: 'exists' },
      ),
    );
  }
  if (events.length) await core.outbox.publishDirect(events);
  return events.length;
}
