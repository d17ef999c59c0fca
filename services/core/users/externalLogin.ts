// The local user behind an external log-in (Mastodon's User::Omniauthable): found by the provider's
// subject; else, when someone is signed in, their identity is linked to that user; else a new
// account is made, its username from the uid claim (the part before any "@", letters, digits and
// underscores, 30 at most, then `_1`, `_2`… until free), its display name from the name claims,
// confirmed when the provider vouches for the address (or OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED),
// approved (Mastodon's external users skip approval). Refused when registrations are closed.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { updateProfile } from '../accounts/profile.ts';
import { identities } from '../model/identities.ts';
import { createLocalAccount, AccountValidationError, findLocalAccountByUsername } from '../accounts/create.ts';
import { RESERVED_USERNAMES, USERNAME_MAX, isValidEmail } from '../accounts/validation.ts';
import { getRegistrationsMode } from '../settings/settings.ts';
import { generatePassword } from './passwords.ts';
import type { OidcClaims } from '../auth/oidc.ts';

export type ExternalLoginProblem = 'registrations_closed' | 'missing_email' | 'email_taken' | 'missing_uid';

export class ExternalLoginError extends Error {
  readonly problem: ExternalLoginProblem;
  constructor(problem: ExternalLoginProblem) {
    super(problem);
    this.problem = problem;
  }
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const truthy = (v: unknown): boolean => v === true || v === 'true';

/** Mastodon's ensure_valid_username. */
export function usernameFromUid(uid: string): string {
  return uid
    .split('@')[0]
    .replace(/[^a-z0-9_]+/gi, '')
    .slice(0, USERNAME_MAX);
}

async function uniqueUsername(core: Core, start: string): Promise<string> {
  const base = start || 'user';
  let candidate = base;
  for (
    let i = 1;
    RESERVED_USERNAMES.has(candidate.toLowerCase()) || (await findLocalAccountByUsername(core, candidate));
    i += 1
  ) {
    const suffix = `_${i}`;
    candidate = `${base.slice(0, USERNAME_MAX - suffix.length)}${suffix}`;
  }
  return candidate;
}

export async function userForExternalLogin(
  core: Core,
  opts: {
    provider: string;
    uidField: string;
    assumeEmailIsVerified: boolean;
    claims: OidcClaims;
    signedIn: UserDoc | null;
  },
): Promise<{ user: UserDoc; created: boolean }> {
  const { claims } = opts;
  const uid =
    text(claims[opts.uidField]) ?? (typeof claims[opts.uidField] === 'number' ? String(claims[opts.uidField]) : null);
  if (!uid) throw new ExternalLoginError('missing_uid');
  const identity = await collection(core.db, identities).findOne({ provider: opts.provider, uid });
  if (identity) {
    const user = await collection(core.db, users).findOne({ _id: identity.userId });
    if (user) return { user, created: false };
  }
  const link = async (user: UserDoc) => {
    await collection(core.db, identities).updateOne(
      { provider: opts.provider, uid },
      {
        $set: { userId: user._id },
        $setOnInsert: { _id: await nextSerialId(core.db, 'identities'), createdAt: new Date() },
      },
      { upsert: true },
    );
  };
  // Someone signed in here links this identity to their own user.
  if (opts.signedIn) {
    await link(opts.signedIn);
    return { user: opts.signedIn, created: false };
  }
  if ((await getRegistrationsMode(core)) === 'closed') throw new ExternalLoginError('registrations_closed');
  const email = text(claims.verified_email) ?? text(claims.email);
  if (!email || !isValidEmail(email)) throw new ExternalLoginError('missing_email');
  const verified =
    truthy(claims.verified) ||
    truthy(claims.verified_email) ||
    truthy(claims.email_verified) ||
    opts.assumeEmailIsVerified;
  const username = await uniqueUsername(core, usernameFromUid(uid));
  let created;
  try {
    created = await createLocalAccount(core, {
      username,
      email,
      // Never typed by anyone: the password log-in of this user stays closed until a reset.
      password: generatePassword(),
      confirmed: verified,
      approved: true,
      locale: null,
    });
  } catch (err) {
    if (err instanceof AccountValidationError && err.problems.email) throw new ExternalLoginError('email_taken');
    throw err;
  }
  const displayName =
    text(claims.name) ?? ([text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ') || null);
  if (displayName) await updateProfile(core, created.account, created.user, { displayName: displayName.slice(0, 30) });
  await link(created.user);
  return { user: created.user, created: true };
}
