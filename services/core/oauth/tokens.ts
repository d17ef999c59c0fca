// Access tokens. Stored as a sha256 hash (the lookup key) plus a sealed copy so that a grant for
// the same app, user and scopes can hand back the existing token (Doorkeeper's reuse_access_token).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accessTokens, type AccessTokenDoc } from '../model/oauth.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { seal, unseal } from './seal.ts';
import { unsubscribeTokens } from '../push/subscriptions.ts';

export interface IssuedToken {
  doc: AccessTokenDoc;
  token: string;
}

function sameScopes(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((s) => sb.has(s));
}

export async function issueAccessToken(
  core: Core,
  input: { appId: Id; userId: Id | null; scopes: string[]; reuse?: boolean },
): Promise<IssuedToken> {
  if (input.reuse !== false) {
    const candidates = await collection(core.db, accessTokens)
      .find({ appId: input.appId, userId: input.userId, revokedAt: null })
      .sort({ _id: -1 })
      .limit(20)
      .toArray();
    for (const doc of candidates) {
      if (!doc.tokenSealed || !sameScopes(doc.scopes, input.scopes)) continue;
      const token = unseal(core.config.secretKeyBase, doc.tokenSealed);
      if (token && hashSecret(token) === doc.tokenHash) return { doc, token };
    }
  }
  const token = newSecret();
  const doc: AccessTokenDoc = {
    _id: await nextSerialId(core.db, 'oauth_tokens'),
    tokenHash: hashSecret(token),
    tokenSealed: seal(core.config.secretKeyBase, token),
    appId: input.appId,
    userId: input.userId,
    scopes: [...new Set(input.scopes)],
    createdAt: new Date(),
    revokedAt: null,
    lastUsedAt: null,
  };
  await collection(core.db, accessTokens).insertOne(doc);
  return { doc, token };
}

/** Revokes a token of the given app (RFC 7009: unknown tokens are not an error). */
export async function revokeAccessToken(core: Core, appId: Id, token: string): Promise<boolean> {
  const filter = { tokenHash: hashSecret(token), appId, revokedAt: null };
  const found = await collection(core.db, accessTokens).findOne(filter, { projection: { _id: 1 } });
  const res = await collection(core.db, accessTokens).updateOne(filter, {
    $set: { revokedAt: new Date(), tokenSealed: null },
  });
  // A revoked token's Web Push subscription goes with it (Mastodon: dependent destroy).
  if (found) await unsubscribeTokens(core, [found._id]);
  return res.modifiedCount > 0;
}

/** The app a token (live or revoked) was issued to; null when no such token exists. */
export async function appIdOfToken(core: Core, token: string): Promise<Id | null> {
  const doc = await collection(core.db, accessTokens).findOne(
    { tokenHash: hashSecret(token) },
    { projection: { appId: 1 } },
  );
  return doc?.appId ?? null;
}

/** Records that the token was used just now. */
export async function touchAccessToken(core: Core, tokenId: Id): Promise<void> {
  await collection(core.db, accessTokens).updateOne({ _id: tokenId }, { $set: { lastUsedAt: new Date() } });
}

/** Revokes every token of a user (e.g. when the login is disabled), or only those of one app. */
export async function revokeUserTokens(core: Core, userId: Id, appId?: Id): Promise<void> {
  const filter = appId === undefined ? { userId, revokedAt: null } : { userId, appId, revokedAt: null };
  const live = await collection(core.db, accessTokens)
    .find(filter, { projection: { _id: 1 } })
    .toArray();
  await unsubscribeTokens(
    core,
    live.map((t) => t._id),
  );
  await collection(core.db, accessTokens).updateMany(filter, { $set: { revokedAt: new Date(), tokenSealed: null } });
}

/** The Token entity (POST /oauth/token, POST /api/v1/accounts). */
export function tokenEntity(issued: IssuedToken): {
  access_token: string;
  token_type: 'Bearer';
  scope: string;
  created_at: number;
} {
  return {
    access_token: issued.token,
    token_type: 'Bearer',
    scope: issued.doc.scopes.join(' '),
    created_at: Math.floor(issued.doc.createdAt.getTime() / 1000),
  };
}
