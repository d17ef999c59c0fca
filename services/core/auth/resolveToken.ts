// Resolving a bearer token to its token, app, user and account records, for the API and the
// streaming server alike. The token hash → ids mapping never changes, so it is cached in Redis:
// with it, the four records are read in one parallel round trip instead of four sequential ones,
// and the token record itself is always read fresh, so a revocation counts at once.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accessTokens, apps, type AccessTokenDoc, type AppDoc } from '../model/oauth.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { unauthorized } from '../errors.ts';
import { hashSecret } from './tokens.ts';

export interface AuthContext {
  token: AccessTokenDoc;
  app: AppDoc;
  /** null for app tokens (client-credentials grant). */
  user: UserDoc | null;
  account: AccountDoc | null;
}

const ID_TTL_SECONDS = 24 * 3600;

/**
 * Apps are never changed after registration (Mastodon has no update), so their records are kept in
 * memory for a minute: one query less on every authenticated request.
 */
const APP_TTL_MS = 60_000;
const APP_CACHE_MAX = 10_000;
/** Per database (ids are per database; tests run several in one process). */
const appCaches = new WeakMap<object, Map<bigint, { app: AppDoc; until: number }>>();

async function findApp(core: Core, id: Id): Promise<AppDoc | null> {
  let appCache = appCaches.get(core.db);
  if (!appCache) appCaches.set(core.db, (appCache = new Map()));
  const now = Date.now();
  const hit = appCache.get(id);
  if (hit && hit.until > now) return hit.app;
  const app = await collection(core.db, apps).findOne({ _id: id });
  if (app) {
    if (appCache.size >= APP_CACHE_MAX) appCache.clear();
    appCache.set(id, { app, until: now + APP_TTL_MS });
  } else appCache.delete(id);
  return app;
}

function idsKey(hash: string): string {
  return `auth:ids:${hash}`;
}

async function resolveByIds(core: Core, hash: string, ids: string[]): Promise<AuthContext | null | undefined> {
  const [tokenId, appId, userId, accountId] = ids.map((s) => (s === '' ? null : BigInt(s)));
  if (tokenId === null || appId === null) return undefined;
  const [token, app, user, account] = await Promise.all([
    collection(core.db, accessTokens).findOne({ _id: tokenId }),
    findApp(core, appId),
    userId === null ? null : collection(core.db, users).findOne({ _id: userId }),
    accountId === null ? null : collection(core.db, accounts).findOne({ _id: accountId }),
  ]);
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
  const cached = await core.redis.get(idsKey(hash)).catch(() => null);
  if (cached) {
    const found = await resolveByIds(core, hash, cached.split(':'));
    if (found !== undefined) return found;
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
  const user = await collection(core.db, users).findOne({ _id: token.userId });
  if (!user) return null;
  const account = await collection(core.db, accounts).findOne({ _id: user.accountId });
  if (!account) return null;
  await core.redis
    .set(idsKey(hash), `${token._id}:${app._id}:${user._id}:${account._id}`, 'EX', ID_TTL_SECONDS)
    .catch(() => undefined);
  return { token, app, user, account };
}
