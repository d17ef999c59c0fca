// Password log-in for the OAuth pages: by e-mail address (as Mastodon), argon2id verification, and
// a per-address failure throttle against guessing.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts } from '../model/accounts.ts';
import { hashSecret } from '../auth/tokens.ts';
import { verifyPassword, hashPassword } from './passwords.ts';

const MAX_FAILURES = 10;
const FAILURE_WINDOW_SECONDS = 15 * 60;

// Verifying against a real hash when the address is unknown keeps the response time the same.
let decoyHash: Promise<string> | null = null;

export type LoginResult = { ok: true; user: UserDoc } | { ok: false; reason: 'invalid' | 'throttled' };

export async function logIn(core: Core, email: string, password: string): Promise<LoginResult> {
  const address = email.trim().toLowerCase();
  const failuresKey = `login_failures:${hashSecret(address)}`;
  const failures = Number((await core.redis.get(failuresKey)) ?? 0);
  if (failures >= MAX_FAILURES) return { ok: false, reason: 'throttled' };
  const user =
    address && address.length <= 320 ? await collection(core.db, users).findOne({ emailLower: address }) : null;
  decoyHash ??= hashPassword('decoy password for timing');
  const ok = await verifyPassword(user ? user.passwordHash : await decoyHash, password.slice(0, 200));
  if (!user || !ok) {
    await core.redis.multi().incr(failuresKey).expire(failuresKey, FAILURE_WINDOW_SECONDS).exec();
    return { ok: false, reason: 'invalid' };
  }
  await core.redis.del(failuresKey);
  await collection(core.db, users).updateOne({ _id: user._id }, { $set: { lastSignInAt: new Date() } });
  return { ok: true, user };
}

export type LoginRefusal = 'disabled' | 'suspended' | 'unconfirmed' | 'pending';

/** Why a user with the right password still may not use the web pages and apps; null when they may. */
export async function loginRefusal(core: Core, user: UserDoc): Promise<LoginRefusal | null> {
  if (user.disabled) return 'disabled';
  const account = await collection(core.db, accounts).findOne(
    { _id: user.accountId },
    { projection: { suspendedAt: 1 } },
  );
  if (account?.suspendedAt) return 'suspended';
  if (!user.confirmedAt) return 'unconfirmed';
  if (!user.approved) return 'pending';
  return null;
}
