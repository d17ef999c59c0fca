// Browser sessions of the web pages (log-in, consent, settings): a random id in a cookie, the user
// id in Redis under the id's hash, expiring after two weeks. Each user's session hashes are also
// kept in a set, so a password reset can end every session of the user, and each session has a
// small record (browser, IP, created, last use) for the list on the account page.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { users } from '../model/users.ts';

/** The name of the pages' session cookie (its value is the session id). */
export const SESSION_COOKIE = '_session_id';
export const SESSION_TTL_SECONDS = 14 * 24 * 3600;
const key = (hash: string): string => `web_session:${hash}`;
const userKey = (userId: Id): string => `web_sessions:${userId}`;
const infoKey = (hash: string): string => `web_session_info:${hash}`;

/** Last use is written at most this often per session. */
const TOUCH_EVERY_MS = 5 * 60 * 1000;

export interface WebSessionClient {
  ip: string | null;
  userAgent: string | null;
}

export interface WebSessionInfo {
  /** The session's public id (the hash of its secret, never the secret). */
  id: string;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  lastUsedAt: Date;
}

function clientFields(client: WebSessionClient, now: number): Record<string, string> {
  return {
    ip: (client.ip ?? '').slice(0, 64),
    ua: (client.userAgent ?? '').slice(0, 300),
    used: String(now),
  };
}

export async function createWebSession(core: Core, userId: Id, client?: WebSessionClient): Promise<string> {
  const id = newSecret();
  const hash = hashSecret(id);
  const now = Date.now();
  // Separate commands, not one MULTI: the keys may live on different Redis Cluster slots.
  await core.redis.set(key(hash), String(userId), 'EX', SESSION_TTL_SECONDS);
  await core.redis.hset(infoKey(hash), {
    ...clientFields(client ?? { ip: null, userAgent: null }, now),
    created: String(now),
  });
  await core.redis.expire(infoKey(hash), SESSION_TTL_SECONDS);
  await core.redis.sadd(userKey(userId), hash);
  await core.redis.expire(userKey(userId), SESSION_TTL_SECONDS);
  return id;
}

/** Records a use of the session (its browser and IP), at most every few minutes. */
export async function touchWebSession(core: Core, id: string | undefined, client: WebSessionClient): Promise<void> {
  if (!id || id.length > 100) return;
  const hash = hashSecret(id);
  const now = Date.now();
  const used = Number(await core.redis.hget(infoKey(hash), 'used'));
  if (Number.isFinite(used) && now - used < TOUCH_EVERY_MS) return;
  await core.redis.hset(infoKey(hash), clientFields(client, now));
  await core.redis.expire(infoKey(hash), SESSION_TTL_SECONDS);
}

/** The live sessions of a user, most recently used first; ended ones are pruned from the index. */
export async function listWebSessions(core: Core, userId: Id): Promise<WebSessionInfo[]> {
  const out: WebSessionInfo[] = [];
  for (const hash of await core.redis.smembers(userKey(userId))) {
    if (!(await core.redis.exists(key(hash)))) {
      await core.redis.srem(userKey(userId), hash);
      continue;
    }
    const info = await core.redis.hgetall(infoKey(hash));
    const created = Number(info.created);
    const used = Number(info.used);
    out.push({
      id: hash,
      ip: info.ip || null,
      userAgent: info.ua || null,
      createdAt: new Date(Number.isFinite(created) ? created : 0),
      lastUsedAt: new Date(Number.isFinite(used) ? used : Number.isFinite(created) ? created : 0),
    });
  }
  return out.sort((a, b) => b.lastUsedAt.getTime() - a.lastUsedAt.getTime());
}

/** The public id of the session behind a cookie value. */
export function webSessionPublicId(id: string | undefined): string | null {
  return id && id.length <= 100 ? hashSecret(id) : null;
}

/** Ends one session of a user by its public id; false when it is not theirs or already gone. */
export async function destroyWebSessionById(core: Core, userId: Id, publicId: string): Promise<boolean> {
  if (!/^[\w-]{1,100}$/.test(publicId)) return false;
  if (!(await core.redis.sismember(userKey(userId), publicId))) return false;
  await core.redis.del(key(publicId));
  await core.redis.del(infoKey(publicId));
  await core.redis.srem(userKey(userId), publicId);
  return true;
}

export async function webSessionUser(core: Core, id: string | undefined): Promise<Id | null> {
  if (!id || id.length > 100) return null;
  const v = await core.redis.get(key(hashSecret(id)));
  return v && /^\d+$/.test(v) ? BigInt(v) : null;
}

/** The account signed in by a session whose user may use it (approved, not disabled), not suspended. */
export async function webSessionAccount(core: Core, id: string | undefined): Promise<CachedAccount | null> {
  const userId = await webSessionUser(core, id);
  if (userId === null) return null;
  const user = await collection(core.db, users).findOne({ _id: userId });
  if (!user || user.disabled || !user.approved) return null;
  return collection(core.db, accounts).findOne(
    { _id: user.accountId, suspendedAt: null },
    { projection: { privateKeyPem: 0 } },
  );
}

export async function destroyWebSession(core: Core, id: string | undefined): Promise<void> {
  if (!id || id.length > 100) return;
  const hash = hashSecret(id);
  const userId = await core.redis.getdel(key(hash));
  await core.redis.del(infoKey(hash));
  if (userId && /^\d+$/.test(userId)) await core.redis.srem(userKey(BigInt(userId)), hash);
}

/** Ends every browser session of a user, but the one whose id is `keep` (the caller's own). */
export async function destroyUserWebSessions(core: Core, userId: Id, keep?: string): Promise<void> {
  const kept = keep && keep.length <= 100 ? hashSecret(keep) : null;
  const hashes = await core.redis.smembers(userKey(userId));
  for (const hash of hashes) {
    if (hash === kept) continue;
    await core.redis.del(key(hash));
    await core.redis.del(infoKey(hash));
    await core.redis.srem(userKey(userId), hash);
  }
}
