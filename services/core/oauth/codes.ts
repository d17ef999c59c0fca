// Authorization codes (authorization-code grant): single use, 10 minutes, bound to app, user,
// redirect URI, scopes and the PKCE challenge. Stored hashed like every other secret.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accessTokens, authorizationCodeUses, authorizationCodes, type AuthorizationCodeDoc } from '../model/oauth.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { unsubscribeTokens } from '../push/subscriptions.ts';

export const CODE_LIFETIME_MS = 10 * 60 * 1000;

export async function createAuthorizationCode(
  core: Core,
  input: { appId: Id; userId: Id; redirectUri: string; scopes: string[]; codeChallenge: string | null },
): Promise<string> {
  const code = newSecret();
  const now = new Date();
  await collection(core.db, authorizationCodes).insertOne({
    _id: await nextSerialId(core.db, 'oauth_codes'),
    codeHash: hashSecret(code),
    appId: input.appId,
    userId: input.userId,
    redirectUri: input.redirectUri,
    scopes: input.scopes,
    codeChallenge: input.codeChallenge,
    codeChallengeMethod: input.codeChallenge ? 'S256' : null,
    expiresAt: new Date(now.getTime() + CODE_LIFETIME_MS),
    usedAt: null,
    issuedTokenId: null,
    createdAt: now,
  });
  return code;
}

export async function findAuthorizationCode(core: Core, code: string): Promise<AuthorizationCodeDoc | null> {
  if (typeof code !== 'string' || code.length > 200) return null;
  return collection(core.db, authorizationCodes).findOne({ codeHash: hashSecret(code) });
}

/** Marks a code used; false when it already was (a concurrent or replayed exchange). */
export async function consumeAuthorizationCode(core: Core, id: Id): Promise<boolean> {
  const usedAt = new Date();
  try {
    await collection(core.db, authorizationCodeUses).insertOne({ _id: id, usedAt });
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
  await collection(core.db, authorizationCodes).updateOne({ _id: id }, { $set: { usedAt } });
  return true;
}

export async function recordIssuedToken(core: Core, codeId: Id, tokenId: Id): Promise<void> {
  await collection(core.db, authorizationCodes).updateOne({ _id: codeId }, { $set: { issuedTokenId: tokenId } });
}

/** A used code came back: revoke what it was exchanged for, as RFC 6749 §4.1.2 advises. */
export async function handleCodeReplay(core: Core, code: AuthorizationCodeDoc): Promise<void> {
  if (!code.issuedTokenId) return;
  await collection(core.db, accessTokens).updateOne(
    { _id: code.issuedTokenId, revokedAt: null },
    { $set: { revokedAt: new Date(), tokenSealed: null } },
  );
  await unsubscribeTokens(core, [code.issuedTokenId]);
}
