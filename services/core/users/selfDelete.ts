// Deleting one's own account (Mastodon's Settings::DeletesController and AccountDeletionWorker):
// with the password, the account is suspended at once (it vanishes, its tokens and sessions stop
// working), then the scheduler's `account-deletions` job removes its data as the moderation
// deletion does (a Delete of the actor goes to every server that knows it) and removes the login,
// so the e-mail address may sign up again; the account record stays, so the username stays taken.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accountDeletionRequests } from '../model/accountMigrations.ts';
import { verifyPassword } from './passwords.ts';
import { suspendAccount } from '../moderation/accountActions.ts';
import { deleteAccountData } from '../moderation/accountRemoval.ts';
import { destroyUserWebSessions } from '../oauth/sessions.ts';
import { revokeUserTokens } from '../oauth/tokens.ts';

const LEASE_MS = 10 * 60_000;

/** Returns false when the password is wrong (nothing happens then). */
export async function requestAccountDeletion(
  core: Core,
  user: UserDoc,
  account: AccountDoc,
  password: string,
): Promise<boolean> {
  const stored = await collection(core.db, users).findOne({ _id: user._id }, { projection: { passwordHash: 1 } });
  if (!stored || !(await verifyPassword(stored.passwordHash, password))) return false;
  await suspendAccount(core, account, account._id, { origin: 'local', log: false, blockEmail: false });
  await collection(core.db, accountDeletionRequests).updateOne(
    { _id: account._id },
    { $setOnInsert: { userId: user._id, requestedAt: new Date(), leaseUntil: null } },
    { upsert: true },
  );
  await revokeUserTokens(core, user._id);
  await destroyUserWebSessions(core, user._id);
  return true;
}

/** The scheduler job: deletes the data of accounts whose owners asked for it. */
export async function processAccountDeletions(core: Core, limit = 5): Promise<number> {
  let handled = 0;
  for (; handled < limit; handled++) {
    const now = new Date();
    const claimed = await collection(core.db, accountDeletionRequests).findOneAndUpdate(
      { $or: [{ leaseUntil: null }, { leaseUntil: { $lt: now } }] },
      { $set: { leaseUntil: new Date(now.getTime() + LEASE_MS) } },
      { sort: { requestedAt: 1 }, returnDocument: 'after' },
    );
    if (!claimed) break;
    const account = await collection(core.db, accounts).findOne({ _id: claimed._id });
    if (account?.suspendedAt && !account.dataDeletedAt) await deleteAccountData(core, account, null);
    await revokeUserTokens(core, claimed.userId);
    await collection(core.db, users).deleteOne({ _id: claimed.userId });
    await collection(core.db, accountDeletionRequests).deleteOne({ _id: claimed._id });
  }
  return handled;
}
