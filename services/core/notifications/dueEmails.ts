// Sends the notification e-mails whose wait is over (emails.ts schedules them). As Mastodon's
// NotificationMailer at delivery time: nothing when the notification is gone (an undone favourite
// or boost, a withdrawn follow, a deleted post) or the user is no longer functional (disabled,
// suspended, moved, deleted), and nothing when they turned that kind of e-mail off meanwhile.
// Each mail carries Mastodon's List-ID and one-click List-Unsubscribe headers.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { notifications, type NotificationDoc } from '../model/notifications.ts';
import { notificationMails, type NotificationMailDoc } from '../model/notificationMails.ts';
import { claimAttempt } from '../scheduledStatuses/claims.ts';
import { acctOf } from '../entities/account.ts';
import { plainText } from '../filters/match.ts';
import { mailRequestedEvent, type NotificationMailTemplate } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';
import { unsubscribeUrl } from '../users/unsubscribe.ts';
import { functionalUser, isMailed } from './emails.ts';

function statusSummary(status: StatusDoc): string {
  // A content warning hides the post in the e-mail as it does in the apps.
  if (status.spoilerText) return `Content warning: ${status.spoilerText}`;
  return (status.text || plainText(status.content)).trim();
}

const usableAccount = (a: AccountDoc) => !a.suspendedAt && !a.memorial && a.movedToAccountId === null;

/** Claims up to `limit` due mails; each is ours alone (see claims.ts). */
async function claimDue(core: Core, workerId: string, limit: number, now: Date): Promise<NotificationMailDoc[]> {
  const coll = collection(core.db, notificationMails);
  const due = await coll
    .find({ dueAt: { $lte: now }, $or: [{ claimedUntil: null }, { claimedUntil: { $lte: now } }] })
    .sort({ dueAt: 1 })
    .limit(limit)
    .toArray();
  const claimed: NotificationMailDoc[] = [];
  for (const candidate of due) {
    if (!(await claimAttempt(core, `notification_mail:${candidate._id}`, candidate.attempts, workerId))) continue;
    const claimedUntil = new Date(Date.now() + 60_000);
    await coll.updateOne({ _id: candidate._id }, { $set: { claimedUntil, attempts: candidate.attempts + 1 } });
    claimed.push(candidate);
  }
  return claimed;
}

const byId = <T extends { _id: Id }>(docs: T[]) => new Map<Id, T>(docs.map((d) => [d._id, d]));

/** Requests the due notification e-mails that are still wanted; returns how many mails were handled. */
export async function sendDueNotificationMails(
  core: Core,
  opts: { workerId: string; limit?: number; now?: Date },
): Promise<number> {
  const claimed = await claimDue(core, opts.workerId, opts.limit ?? 100, opts.now ?? new Date());
  if (claimed.length === 0) return 0;
  const ids = claimed.map((c) => c._id);
  const docs = (
    await collection(core.db, notifications)
      .find({ _id: { $in: ids } })
      .toArray()
  ).filter(isMailed);
  const accountIds = [...new Set(docs.flatMap((d) => [d.accountId, d.fromAccountId]))];
  const statusIds = [...new Set(docs.flatMap((d) => (d.statusId === null ? [] : [d.statusId])))];
  const [logins, accountDocs, statusDocs] = await Promise.all([
    collection(core.db, users)
      .find({ accountId: { $in: [...new Set(docs.map((d) => d.accountId))] } })
      .toArray(),
    collection(core.db, accounts)
      .find({ _id: { $in: accountIds } })
      .toArray(),
    collection(core.db, statuses)
      .find({ _id: { $in: statusIds }, deletedAt: null })
      .toArray(),
  ]);
  const loginOf = new Map<Id, UserDoc>(logins.map((u) => [u.accountId, u]));
  const accountById = byId(accountDocs);
  const statusById = byId(statusDocs);

  const events = [];
  for (const doc of docs) {
    const user = loginOf.get(doc.accountId);
    const recipient = accountById.get(doc.accountId);
    const from = accountById.get(doc.fromAccountId);
    const status = doc.statusId === null ? null : statusById.get(doc.statusId);
    if (!user || !recipient || !from || status === undefined) continue; // gone since
    if (!functionalUser(user) || !usableAccount(recipient) || !wantsEmail(user, doc.type)) continue;
    events.push(notificationMail(core, doc, user, recipient, from, status));
  }
  // Not recorded in the outbox (publishDirect): the pending mail is its record until removed.
  if (events.length) await core.outbox.publishDirect(events);
  await collection(core.db, notificationMails).deleteMany({ _id: { $in: ids } });
  return claimed.length;
}

function notificationMail(
  core: Core,
  doc: NotificationDoc & { type: NotificationMailTemplate },
  user: UserDoc,
  recipient: AccountDoc,
  from: AccountDoc,
  status: StatusDoc | null,
) {
  const unsubscribe = unsubscribeUrl(core, user._id, doc.type);
  const domain = core.config.localDomain.replace(/:\d+$/, ''); // a List-ID is a dot-atom: no port
  return mailRequestedEvent(
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
        unsubscribe,
      },
      headers: {
        'List-ID': `<${doc.type}.${recipient.username}.${domain}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'List-Unsubscribe': `<${unsubscribe}>`,
      },
    },
    { collection: 'notifications', filter: { _id: doc._id }, expect: 'exists' },
  );
}
