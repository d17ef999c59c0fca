// Resolving a bearer token to its token, app, user and account records, for the API and the
// streaming server alike. The token hash → ids mapping never changes, so it is cached in Redis;
// with it, the token, user and account come from the document cache (db/docCache.ts: one Redis
// round trip, and every write to them drops the copies, so a revocation or a suspension counts at
// once).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { readThrough } from '../db/docCache.ts';
import { accessTokens, accessTokenView, type AccessTokenDoc, type AppDoc } from '../model/oauth.ts';
import { findApp } from './appCache.ts';
import { userView, type CachedUser } from '../model/users.ts';
import { accountView, type CachedAccount } from '../model/accounts.ts';
import { unauthorized } from '../errors.ts';
import { hashSecret } from './tokens.ts';

export interface AuthContext {
  token: AccessTokenDoc;
  app: AppDoc;
  /** null for app tokens (client-credentials grant). */
  user: CachedUser | null;
  account: CachedAccount | null;
}

const ID_TTL_SECONDS = 24 * 3600;

/** The same mapping in this process (it never changes; the records behind it are read every time). */
const ID_CACHE_MAX = 50_000;
const localIds = new Map<string, string>();

function rememberIds(hash: string, ids: string): void {
  if (localIds.size >= ID_CACHE_MAX) localIds.delete(localIds.keys().next().value as string);
  localIds.set(hash, ids);
}

function idsKey(hash: string): string {
  return `auth:ids:${hash}`;
}

async function resolveByIds(core: Core, hash: string, ids: string[]): Promise<AuthContext | null | undefined> {
  const [tokenId, appId, userId, accountId] = ids.map((s) => (s === '' ? null : BigInt(s)));
  if (tokenId === null || appId === null) return undefined;
  const [tokens, app, found, accountsFound] = await Promise.all([
    readThrough(core, accessTokenView, [tokenId]),
    findApp(core, appId),
    userId === null ? null : readThrough(core, userView, [userId]),
    accountId === null ? null : readThrough(core, accountView, [accountId]),
  ]);
  const token = tokens.get(tokenId);
  const user = userId === null ? null : found?.get(userId);
  const account = accountId === null ? null : accountsFound?.get(accountId);
  // A record that went away or does not match any more: look the token up from scratch.
  if (!token || token.tokenHash !== hash || token.userId !== userId) return undefined;
  if (token.revokedAt) throw unauthorized('The access token was revoked');
  if (!app) return null;
  if (userId === null) return { token, app, user: null, account: null };
  if (!user || !account || user.accountId !== account._id) return undefined;
  return { token, app, user, account };
}

/** Looks a token string up; null for an unknown token. Throws 401 for a revoked one. */
export async function resolveToken(core: Core, raw: string): Promise<AuthContext | null> {
  const hash = hashSecret(raw);
  const cached = localIds.get(hash) ?? (await core.redis.get(idsKey(hash)).catch(() => null));
  if (cached) {
    const found = await resolveByIds(core, hash, cached.split(':'));
    if (found !== undefined) {
      rememberIds(hash, cached);
      return found;
    }
    localIds.delete(hash);
  }
  const token = await collection(core.db, accessTokens).findOne({ tokenHash: hash });
  if (!token) return null;
  if (token.revokedAt) throw unauthorized('The access token was revoked');
  const app = await findApp(core, token.appId);
  if (!app) return null;
  if (token.userId === null) {
    await core.redis.set(idsKey(hash), `${token._id}:${app._id}::`, 'EX', ID_TTL_SECONDS).catch(() => undefined);
    return { token, app, user: null, account: null };
  }
  // Through the document cache, so that the requests after this one find the user and account there.
  const user = (await readThrough(core, userView, [token.userId])).get(token.userId);
  if (!user) return null;
  const account = (await readThrough(core, accountView, [user.accountId])).get(user.accountId);
  if (!account) return null;
  await core.redis
    .set(idsKey(hash), `${token._id}:${app._id}:${user._id}:${account._id}`, 'EX', ID_TTL_SECONDS)
    .catch(() => undefined);
  return { token, app, user, account };
}
