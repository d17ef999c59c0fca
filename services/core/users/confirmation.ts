// E-mail confirmation: the token in the mailed link, confirming, re-sending, and changing the
// address while unconfirmed.
import type { Core } from '../context.ts';
import { assertEmailAllowed, checkEmail } from '../moderation/emailBlocks.ts';
import type { NewEvent } from '../events/outbox.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { mailStaffAboutPendingAccount } from '../moderation/pendingAccountMails.ts';

export function confirmationLink(core: Core, token: string): string {
  return `${core.config.baseUrl}/auth/confirmation?confirmation_token=${encodeURIComponent(token)}`;
}

/** The MailRequested event of a confirmation mail, verified by the token hash being stored. */
export function confirmationMailEvent(
  core: Core,
  user: UserDoc,
  account: AccountDoc,
  token: string,
): NewEvent<'MailRequested'> {
  return mailRequestedEvent(
    {
      to: user.unconfirmedEmail ?? user.email,
      // A confirmed user changing the address gets Mastodon's reconfirmation mail.
      template: user.confirmedAt && user.unconfirmedEmail ? 'reconfirmation' : 'confirmation',
      key: String(user._id),
      variables: { username: account.username, instance: core.config.localDomain, link: confirmationLink(core, token) },
    },
    { collection: users.name, filter: { _id: user._id, confirmationTokenHash: hashSecret(token) }, expect: 'exists' },
  );
}

/** Whether the account behind a user should stay hidden from the API. */
export function userIsPending(user: Pick<UserDoc, 'confirmedAt' | 'approved'>): boolean {
  return user.confirmedAt === null || !user.approved;
}

/** Keeps the account's `pendingUser` flag in step with its user. */
export async function syncPendingFlag(
  core: Core,
  user: Pick<UserDoc, 'accountId' | 'confirmedAt' | 'approved'>,
): Promise<void> {
  await collection(core.db, accounts).updateOne(
    { _id: user.accountId },
    { $set: { pendingUser: userIsPending(user), updatedAt: new Date() } },
  );
}

/** Confirms the user holding a token; null when the token is unknown or already used. */
export async function confirmByToken(core: Core, token: string): Promise<UserDoc | null> {
  if (!token || token.length > 200) return null;
  const tokenHash = hashSecret(token);
  const found = await collection(core.db, users).findOne({ confirmationTokenHash: tokenHash });
  if (!found) return null;
  const now = new Date();
  // A pending new address blocked since it was asked for is not taken over.
  const pendingBlocked =
    found.unconfirmedEmail !== null && (await checkEmail(core, found.unconfirmedEmail)) !== 'allowed';
  const email = (pendingBlocked ? null : found.unconfirmedEmail) ?? found.email;
  // The token hash in the filter makes the link single-use even when clicked twice at once.
  const user = await collection(core.db, users).findOneAndUpdate(
    { _id: found._id, confirmationTokenHash: tokenHash },
    {
      $set: {
        confirmedAt: found.confirmedAt ?? now,
        email,
        emailLower: email.toLowerCase(),
        unconfirmedEmail: null,
        confirmationTokenHash: null,
        updatedAt: now,
      },
    },
    { returnDocument: 'after' },
  );
  if (!user) return null;
  await syncPendingFlag(core, user);
  // A first confirmation of a sign-up that waits for approval: the staff is told (Mastodon's
  // User#notify_staff_about_pending_account!). Best effort: the approval queue shows it anyway.
  if (found.confirmedAt === null && !user.approved)
    await mailStaffAboutPendingAccount(core, user).catch((err: unknown) =>
      core.logger.warn({ err, userId: String(user._id) }, 'pending account e-mails not queued'),
    );
  return user;
}

/** Confirms a user directly (administrator or CLI). */
export async function confirmUser(core: Core, user: UserDoc): Promise<UserDoc> {
  const now = new Date();
  const updated = await collection(core.db, users).findOneAndUpdate(
    { _id: user._id },
    { $set: { confirmedAt: user.confirmedAt ?? now, confirmationTokenHash: null, updatedAt: now } },
    { returnDocument: 'after' },
  );
  if (!updated) throw new Error(`user ${user._id} vanished`);
  await syncPendingFlag(core, updated);
  return updated;
}

/**
 * Sends the confirmation mail again with a fresh token (the old link stops working); with `email`,
 * the mail goes to the new address, which replaces the old one once confirmed.
 */
export async function resendConfirmation(
  core: Core,
  user: UserDoc,
  account: AccountDoc,
  email?: string,
): Promise<UserDoc> {
  const token = newSecret();
  const now = new Date();
  const changed = email !== undefined && email.toLowerCase() !== user.emailLower;
  if (changed) await assertEmailAllowed(core, email);
  const next: UserDoc = {
    ...user,
    unconfirmedEmail: changed ? email : user.unconfirmedEmail,
    confirmationTokenHash: hashSecret(token),
    confirmationSentAt: now,
    updatedAt: now,
  };
  await core.outbox.write([confirmationMailEvent(core, next, account, token)], async () => {
    await collection(core.db, users).updateOne(
      { _id: user._id },
      {
        $set: {
          unconfirmedEmail: next.unconfirmedEmail,
          confirmationTokenHash: next.confirmationTokenHash,
          confirmationSentAt: now,
          updatedAt: now,
        },
      },
    );
  });
  return next;
}

/**
 * Sends a new confirmation link to an unconfirmed user found by address (the "didn't receive the
 * link?" page). Silent when there is no such user or it is confirmed: the page answers the same.
 */
export async function resendConfirmationByEmail(core: Core, email: string): Promise<void> {
  const address = email.trim().toLowerCase();
  if (!address || address.length > 320) return;
  const user = await collection(core.db, users).findOne({ emailLower: address });
  if (!user || user.confirmedAt) return;
  const account = await collection(core.db, accounts).findOne({ _id: user.accountId });
  if (account) await resendConfirmation(core, user, account);
}
