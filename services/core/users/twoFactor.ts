// Two-factor authentication with a TOTP app (RFC 6238, the `otpauth` library), as Mastodon does it
// with devise-two-factor: a 160-bit secret shown once as a QR code, confirmed with a first code,
// 30 s steps with one step of drift, each step usable once (consumed_timestep), and ten single-use
// recovery codes. The secret is kept sealed under SECRET_KEY_BASE, the recovery codes as hashes.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { webauthnCredentials } from '../model/webauthnCredentials.ts';
import { hashSecret } from '../auth/tokens.ts';
import { seal, unseal } from '../oauth/seal.ts';
import { logAdminAction, type Actor } from './moderation.ts';
import { roleOfUser } from '../roles/roles.ts';

const PERIOD_SECONDS = 30;
const DRIFT_STEPS = 1;
export const RECOVERY_CODE_COUNT = 10;
/** How long a secret shown for setup waits for its confirmation code. */
const SETUP_TTL_SECONDS = 15 * 60;

function totp(core: Core, secretBase32: string, username: string): TOTP {
  return new TOTP({
    issuer: core.config.localDomain,
    label: `${username}@${core.config.localDomain}`,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

export function twoFactorEnabled(user: Pick<UserDoc, 'otpRequiredForLogin'>): boolean {
  return user.otpRequiredForLogin === true;
}

/** The user's role requires two-factor authentication (Mastodon's role setting) and it is off. */
export async function twoFactorSetupRequired(core: Core, user: UserDoc): Promise<boolean> {
  return !twoFactorEnabled(user) && (await roleOfUser(core, user)).require2fa;
}

const setupKey = (userId: Id) => `otp_setup:${userId}`;

export interface OtpSetup {
  /** Base32, for typing into the app by hand. */
  secret: string;
  /** otpauth:// URI the QR code encodes. */
  uri: string;
}

/** A new secret waiting for its confirmation code (replaces any earlier unconfirmed one). */
export async function beginOtpSetup(core: Core, user: UserDoc, username: string): Promise<OtpSetup> {
  const secret = new Secret({ size: 20 }).base32;
  await core.redis.set(setupKey(user._id), seal(core.config.secretKeyBase, secret), 'EX', SETUP_TTL_SECONDS);
  return { secret, uri: totp(core, secret, username).toString() };
}

/** The secret being set up, or null once it expired (the page starts over). */
export async function pendingOtpSetup(core: Core, user: UserDoc, username: string): Promise<OtpSetup | null> {
  const sealed = await core.redis.get(setupKey(user._id));
  const secret = sealed ? unseal(core.config.secretKeyBase, sealed) : null;
  return secret ? { secret, uri: totp(core, secret, username).toString() } : null;
}

/** The time step a code belongs to (within the allowed drift), or null when it is wrong. */
function matchingStep(core: Core, secret: string, code: string): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totp(core, secret, 'x').validate({ token, window: DRIFT_STEPS });
  return delta === null ? null : Math.floor(Date.now() / 1000 / PERIOD_SECONDS) + delta;
}

function newRecoveryCodes(): string[] {
  // Mastodon's format: ten hex characters each.
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => randomBytes(5).toString('hex'));
}

const hashCode = (code: string) => hashSecret(code.trim().toLowerCase());

/**
 * Turns two-factor on when `code` matches the pending secret; returns the recovery codes to show
 * once, or null when the code is wrong or the setup expired.
 */
export async function confirmOtpSetup(core: Core, user: UserDoc, code: string): Promise<string[] | null> {
  const sealed = await core.redis.get(setupKey(user._id));
  const secret = sealed ? unseal(core.config.secretKeyBase, sealed) : null;
  if (!secret) return null;
  const step = matchingStep(core, secret, code);
  if (step === null) return null;
  const codes = newRecoveryCodes();
  await collection(core.db, users).updateOne(
    { _id: user._id },
    {
      $set: {
        otpSecret: sealed,
        otpRequiredForLogin: true,
        consumedTimestep: step,
        otpBackupCodes: codes.map(hashCode),
        updatedAt: new Date(),
      },
    },
  );
  await core.redis.del(setupKey(user._id));
  return codes;
}

/** New recovery codes; the old ones stop working. */
export async function regenerateRecoveryCodes(core: Core, user: UserDoc): Promise<string[] | null> {
  if (!twoFactorEnabled(user)) return null;
  const codes = newRecoveryCodes();
  await collection(core.db, users).updateOne(
    { _id: user._id, otpRequiredForLogin: true },
    { $set: { otpBackupCodes: codes.map(hashCode), updatedAt: new Date() } },
  );
  return codes;
}

/**
 * Checks a code typed at log-in: a TOTP code of a step not used before, or an unused recovery
 * code (which is then spent). Each succeeds at most once, even for concurrent attempts.
 */
export async function verifySecondFactor(core: Core, user: UserDoc, code: string): Promise<boolean> {
  if (!twoFactorEnabled(user) || !user.otpSecret) return false;
  const coll = collection(core.db, users);
  const secret = unseal(core.config.secretKeyBase, user.otpSecret);
  const step = secret ? matchingStep(core, secret, code) : null;
  if (step !== null) {
    const res = await coll.updateOne(
      { _id: user._id, $or: [{ consumedTimestep: { $lt: step } }, { consumedTimestep: null }] },
      { $set: { consumedTimestep: step } },
    );
    return res.modifiedCount === 1;
  }
  const typed = code.trim().toLowerCase();
  if (!/^[0-9a-f]{10}$/.test(typed)) return false;
  const hash = hashCode(typed);
  const res = await coll.updateOne(
    { _id: user._id, otpBackupCodes: hash },
    { $pull: { otpBackupCodes: hash }, $set: { updatedAt: new Date() } },
  );
  return res.modifiedCount === 1;
}

/** Turns two-factor off and forgets the secret, the recovery codes and the security keys. */
export async function disableTwoFactor(core: Core, userId: Id): Promise<void> {
  await collection(core.db, webauthnCredentials).deleteMany({ userId });
  await collection(core.db, users).updateOne(
    { _id: userId },
    {
      $set: { otpRequiredForLogin: false, otpSecret: null, otpBackupCodes: [], updatedAt: new Date() },
    },
  );
  await core.redis.del(setupKey(userId));
}

/** An administrator's reset (Mastodon's admin "Disable 2FA" and `tootctl accounts modify --disable-2fa`). */
export async function resetTwoFactorByAdmin(core: Core, user: UserDoc, username: string, actor: Actor): Promise<void> {
  await disableTwoFactor(core, user._id);
  await logAdminAction(core, actor, 'disable_2fa_user', { type: 'User', id: user._id, name: username });
}
