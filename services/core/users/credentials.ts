// Changing the log-in credentials from the account page (/auth/edit): the password (current one
// required; other browser sessions end; the user is told by e-mail) and the e-mail address
// (current password required; confirmation mailed to the new address, the old one is told).
import type { Core } from '../context.ts';
import type { NewEvent } from '../events/outbox.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { destroyUserWebSessions } from '../oauth/sessions.ts';
import { isValidEmail, tooLong, tooShort, blank } from '../accounts/validation.ts';
import { checkEmail, blockedEmailProblem } from '../moderation/emailBlocks.ts';
import { hashPassword, verifyPassword, PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';
import { resendConfirmation } from './confirmation.ts';

/** Mastodon's password rule (8 to 72 characters) as a field message; null when it holds. */
export function passwordProblem(password: string): string | null {
  if (!password) return blank().description;
  if (password.length < PASSWORD_MIN) return tooShort(PASSWORD_MIN).description;
  if (password.length > PASSWORD_MAX) return tooLong(PASSWORD_MAX).description;
  return null;
}

async function username(core: Core, user: UserDoc): Promise<string> {
  const account = await collection(core.db, accounts).findOne({ _id: user.accountId }, { projection: { username: 1 } });
  return account?.username ?? '';
}

/** The "password changed" mail, verified by the new hash being stored. */
export async function passwordChangedMailEvent(core: Core, user: UserDoc): Promise<NewEvent<'MailRequested'>> {
  return mailRequestedEvent(
    {
      to: user.email,
      template: 'password_change',
      key: String(user._id),
      variables: { username: await username(core, user), instance: core.config.localDomain },
    },
    { collection: users.name, filter: { _id: user._id, passwordHash: user.passwordHash }, expect: 'exists' },
  );
}

export type CredentialProblems = Partial<Record<'current_password' | 'password' | 'email', string>>;

export class CredentialError extends Error {
  readonly problems: CredentialProblems;
  constructor(problems: CredentialProblems) {
    super('invalid credentials change');
    this.problems = problems;
  }
}

async function requireCurrentPassword(user: UserDoc, current: string): Promise<void> {
  if (!(await verifyPassword(user.passwordHash, current.slice(0, 200))))
    throw new CredentialError({ current_password: 'is invalid' });
}

/** Sets a new password; every other browser session of the user ends (`keepSession` stays). */
export async function changePassword(
  core: Core,
  user: UserDoc,
  input: { current: string; password: string; keepSession?: string },
): Promise<UserDoc> {
  await requireCurrentPassword(user, input.current);
  const problem = passwordProblem(input.password);
  if (problem) throw new CredentialError({ password: problem });
  const passwordHash = await hashPassword(input.password);
  const now = new Date();
  const next: UserDoc = { ...user, passwordHash, updatedAt: now };
  await core.outbox.write([await passwordChangedMailEvent(core, next)], async () => {
    await collection(core.db, users).updateOne({ _id: user._id }, { $set: { passwordHash, updatedAt: now } });
  });
  await destroyUserWebSessions(core, user._id, input.keepSession);
  return next;
}

/**
 * Starts a change of address: the new one gets a confirmation link and replaces the old one once
 * confirmed; the old one is told at once.
 */
export async function changeEmail(
  core: Core,
  user: UserDoc,
  account: AccountDoc,
  input: { current: string; email: string },
): Promise<UserDoc> {
  await requireCurrentPassword(user, input.current);
  const email = input.email.trim();
  if (!email) throw new CredentialError({ email: blank().description });
  if (!isValidEmail(email)) throw new CredentialError({ email: 'is invalid' });
  if (email.toLowerCase() === user.emailLower) return user;
  const owner = await collection(core.db, users).findOne(
    { emailLower: email.toLowerCase() },
    { projection: { _id: 1 } },
  );
  if (owner) throw new CredentialError({ email: 'has already been taken' });
  if ((await checkEmail(core, email)) !== 'allowed')
    throw new CredentialError({ email: blockedEmailProblem().description });
  const next = await resendConfirmation(core, user, account, email);
  const notice = mailRequestedEvent(
    {
      to: user.email,
      template: 'email_changed',
      key: String(user._id),
      variables: { username: account.username, instance: core.config.localDomain, email },
    },
    { collection: users.name, filter: { _id: user._id, unconfirmedEmail: email }, expect: 'exists' },
  );
  await core.outbox.write([notice], async () => undefined);
  return next;
}
