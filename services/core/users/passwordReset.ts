// Forgotten passwords (Devise's recoverable, as Mastodon uses it): a mailed link with a single-use
// token that expires after 6 hours; setting a new password through it ends every browser session
// and revokes every access token of the user, and tells the user by e-mail.
import type { Core } from '../context.ts';
import { collection, defineCollection, isDuplicateKeyError } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts } from '../model/accounts.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { revokeUserTokens } from '../oauth/tokens.ts';
import { destroyUserWebSessions } from '../oauth/sessions.ts';
import { hashPassword } from './passwords.ts';
import { passwordProblem, passwordChangedMailEvent } from './credentials.ts';

export const RESET_PASSWORD_WITHIN_MS = 6 * 3600 * 1000;

/**
 * One document per used token (`_id` = its hash): the unique insert makes a link single-use even
 * where two conditional updates at once could both succeed (the MongoDB-wire stand-in).
 */
const passwordResetUses = defineCollection<{ _id: string; userId: UserDoc['_id']; usedAt: Date }>(
  'password_reset_uses',
);

export function resetPasswordLink(core: Core, token: string): string {
  return `${core.config.baseUrl}/auth/password/edit?reset_password_token=${encodeURIComponent(token)}`;
}

/**
 * Mails a reset link when the address belongs to a user. Says nothing about whether it does: the
 * page answers the same either way (Devise's paranoid mode).
 */
export async function requestPasswordReset(core: Core, email: string): Promise<void> {
  const address = email.trim().toLowerCase();
  if (!address || address.length > 320) return;
  const user = await collection(core.db, users).findOne({ emailLower: address });
  if (!user) return;
  const account = await collection(core.db, accounts).findOne({ _id: user.accountId }, { projection: { username: 1 } });
  const token = newSecret();
  const tokenHash = hashSecret(token);
  const now = new Date();
  const mail = mailRequestedEvent(
    {
      to: user.email,
      template: 'reset_password_instructions',
      key: String(user._id),
      variables: {
        username: account?.username ?? '',
        instance: core.config.localDomain,
        link: resetPasswordLink(core, token),
      },
    },
    { collection: users.name, filter: { _id: user._id, resetPasswordTokenHash: tokenHash }, expect: 'exists' },
  );
  // A newer link replaces the older one.
  await core.outbox.write([mail], async () => {
    await collection(core.db, users).updateOne(
      { _id: user._id },
      { $set: { resetPasswordTokenHash: tokenHash, resetPasswordSentAt: now, updatedAt: now } },
    );
  });
}

export type ResetTokenCheck = { ok: true; user: UserDoc } | { ok: false; reason: 'invalid' | 'expired' };

/** The user a reset token belongs to, if it is still usable. */
export async function checkResetToken(core: Core, token: string): Promise<ResetTokenCheck> {
  if (!token || token.length > 200) return { ok: false, reason: 'invalid' };
  const user = await collection(core.db, users).findOne({ resetPasswordTokenHash: hashSecret(token) });
  if (!user || !user.resetPasswordSentAt) return { ok: false, reason: 'invalid' };
  if (Date.now() - user.resetPasswordSentAt.getTime() > RESET_PASSWORD_WITHIN_MS)
    return { ok: false, reason: 'expired' };
  return { ok: true, user };
}

export type ResetResult =
  | { ok: true; user: UserDoc }
  | { ok: false; reason: 'invalid' | 'expired' }
  | { ok: false; reason: 'password'; problem: string };

/** Sets a new password through a reset token; the token works once. */
export async function resetPassword(core: Core, token: string, password: string): Promise<ResetResult> {
  const check = await checkResetToken(core, token);
  if (!check.ok) return check;
  const problem = passwordProblem(password);
  if (problem) return { ok: false, reason: 'password', problem };
  const tokenHash = hashSecret(token);
  try {
    await collection(core.db, passwordResetUses).insertOne({
      _id: tokenHash,
      userId: check.user._id,
      usedAt: new Date(),
    });
  } catch (err) {
    if (isDuplicateKeyError(err)) return { ok: false, reason: 'invalid' };
    throw err;
  }
  const passwordHash = await hashPassword(password);
  const now = new Date();
  const user: UserDoc = { ...check.user, passwordHash, resetPasswordTokenHash: null, updatedAt: now };
  await core.outbox.write([await passwordChangedMailEvent(core, user)], async () => {
    await collection(core.db, users).updateOne(
      { _id: user._id },
      { $set: { passwordHash, resetPasswordTokenHash: null, resetPasswordSentAt: null, updatedAt: now } },
    );
  });
  // Whoever knew the old password loses every way in.
  await destroyUserWebSessions(core, user._id);
  await revokeUserTokens(core, user._id);
  return { ok: true, user };
}
