// Security keys as a second factor (WebAuthn, with @simplewebauthn/server), as Mastodon offers
// them once the authenticator app is on: registered with a nickname, used at log-in instead of a
// code, removed one by one or all together when two-factor is turned off. The relying party is the
// LOCAL_DOMAIN host, the origin the server's base URL; challenges wait five minutes in Redis.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertUnique } from '../db/mongo.ts';
import type { UserDoc } from '../model/users.ts';
import { webauthnCredentials, type WebauthnCredentialDoc } from '../model/webauthnCredentials.ts';
import { twoFactorEnabled } from './twoFactor.ts';

const CHALLENGE_TTL_SECONDS = 5 * 60;
export const NICKNAME_MAX = 100;

export class SecurityKeyError extends Error {
  readonly problem: 'otp_required' | 'invalid' | 'nickname_blank' | 'nickname_taken' | 'expired';
  constructor(problem: SecurityKeyError['problem']) {
    super(problem);
    this.problem = problem;
  }
}

function relyingParty(core: Core): { rpID: string; origin: string } {
  return { rpID: core.config.localDomain.replace(/:\d+$/, ''), origin: core.config.baseUrl };
}

const regKey = (userId: Id) => `webauthn_reg:${userId}`;
const authKey = (userId: Id) => `webauthn_auth:${userId}`;

export function listSecurityKeys(core: Core, userId: Id): Promise<WebauthnCredentialDoc[]> {
  return collection(core.db, webauthnCredentials).find({ userId }).sort({ createdAt: 1 }).toArray();
}

export async function hasSecurityKeys(core: Core, userId: Id): Promise<boolean> {
  return (await collection(core.db, webauthnCredentials).countDocuments({ userId }, { limit: 1 })) > 0;
}

export async function securityKeyRegistrationOptions(
  core: Core,
  user: UserDoc,
  username: string,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  if (!twoFactorEnabled(user)) throw new SecurityKeyError('otp_required');
  const { rpID } = relyingParty(core);
  const existing = await listSecurityKeys(core, user._id);
  const options = await generateRegistrationOptions({
    rpName: core.config.localDomain,
    rpID,
    userName: `${username}@${core.config.localDomain}`,
    userID: new TextEncoder().encode(String(user._id)),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({
      id: c.externalId,
      transports: c.transports as AuthenticatorTransport[],
    })),
    authenticatorSelection: { residentKey: 'discouraged', userVerification: 'discouraged' },
  });
  await core.redis.set(regKey(user._id), options.challenge, 'EX', CHALLENGE_TTL_SECONDS);
  return options;
}

export async function registerSecurityKey(
  core: Core,
  user: UserDoc,
  nickname: string,
  response: unknown,
): Promise<WebauthnCredentialDoc> {
  if (!twoFactorEnabled(user)) throw new SecurityKeyError('otp_required');
  const name = nickname.trim().slice(0, NICKNAME_MAX);
  if (!name) throw new SecurityKeyError('nickname_blank');
  const challenge = await core.redis.getdel(regKey(user._id));
  if (!challenge) throw new SecurityKeyError('expired');
  const { rpID, origin } = relyingParty(core);
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch {
    throw new SecurityKeyError('invalid');
  }
  if (!verification.verified || !verification.registrationInfo) throw new SecurityKeyError('invalid');
  const { credential } = verification.registrationInfo;
  const doc: WebauthnCredentialDoc = {
    _id: await nextSerialId(core.db, 'webauthn_credentials'),
    userId: user._id,
    externalId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    signCount: credential.counter,
    nickname: name,
    transports: credential.transports ?? [],
    createdAt: new Date(),
  };
  await insertUnique(collection(core.db, webauthnCredentials), doc, () => new SecurityKeyError('nickname_taken'));
  return doc;
}

export async function deleteSecurityKey(core: Core, userId: Id, id: Id): Promise<boolean> {
  const res = await collection(core.db, webauthnCredentials).deleteOne({ _id: id, userId });
  return res.deletedCount === 1;
}

export async function deleteAllSecurityKeys(core: Core, userId: Id): Promise<void> {
  await collection(core.db, webauthnCredentials).deleteMany({ userId });
}

/** The challenge for a log-in half-way through (password right, second factor asked). */
export async function securityKeyAuthenticationOptions(
  core: Core,
  userId: Id,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const keys = await listSecurityKeys(core, userId);
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(core).rpID,
    allowCredentials: keys.map((k) => ({
      id: k.externalId,
      transports: k.transports as AuthenticatorTransport[],
    })),
    userVerification: 'discouraged',
  });
  await core.redis.set(authKey(userId), options.challenge, 'EX', CHALLENGE_TTL_SECONDS);
  return options;
}

/** Checks a security key's answer to the log-in challenge (each challenge works once). */
export async function verifySecurityKey(core: Core, user: UserDoc, response: unknown): Promise<boolean> {
  if (!twoFactorEnabled(user)) return false;
  const challenge = await core.redis.getdel(authKey(user._id));
  const answer = response as AuthenticationResponseJSON;
  if (!challenge || !answer || typeof answer.id !== 'string') return false;
  const key = await collection(core.db, webauthnCredentials).findOne({ userId: user._id, externalId: answer.id });
  if (!key) return false;
  const { rpID, origin } = relyingParty(core);
  try {
    const verification = await verifyAuthenticationResponse({
      response: answer,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: key.externalId,
        publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64url')),
        counter: key.signCount,
        transports: key.transports as AuthenticatorTransport[],
      },
      requireUserVerification: false,
    });
    if (!verification.verified) return false;
    await collection(core.db, webauthnCredentials).updateOne(
      { _id: key._id },
      { $set: { signCount: verification.authenticationInfo.newCounter } },
    );
    return true;
  } catch {
    return false;
  }
}
