// Mastodon's AdminMailer#new_pending_account: once a sign-up that waits for approval has confirmed
// its e-mail address, each staff member who may manage users and kept "New account needs review"
// on is told, with a link to the account in /admin.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import type { UserDoc } from '../model/users.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';
import { staffWith } from './staff.ts';

/** Asks the mailer for the staff e-mails about a pending sign-up; returns how many. */
export async function mailStaffAboutPendingAccount(core: Core, newcomer: UserDoc): Promise<number> {
  const staff = (await staffWith(core, 'manage_users')).filter((u) => wantsEmail(u, 'pending_account'));
  if (staff.length === 0) return 0;
  const names = new Map(
    (
      await collection(core.db, accounts)
        .find({ _id: { $in: [newcomer.accountId, ...staff.map((u) => u.accountId)] } }, { projection: { username: 1 } })
        .toArray()
    ).map((a) => [a._id, a.username]),
  );
  const username = names.get(newcomer.accountId);
  if (username === undefined) return 0;
  const events = staff.map((u) =>
    mailRequestedEvent(
      {
        to: u.email,
        template: 'new_pending_account',
        key: String(u._id),
        variables: {
          instance: core.config.localDomain,
          username: names.get(u.accountId) ?? '',
          newcomer: username,
          email: newcomer.email,
          reason: newcomer.signUpReason ?? '',
          link: `${core.config.baseUrl}/admin/accounts/${newcomer.accountId}`,
        },
      },
      // Not recorded in the outbox (publishDirect): the confirmation is already written.
      { collection: 'users', filter: { _id: newcomer._id }, expect: 'exists' },
    ),
  );
  await core.outbox.publishDirect(events);
  return events.length;
}
