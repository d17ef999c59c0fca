// Browser sessions of the web pages (log-in, consent, settings): a random id in a cookie, the user
// id in Redis under the id's hash, expiring after two weeks. Each user's session hashes are also
// kept in a set, so a password reset can end every session of the user.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';

export const SESSION_TTL_SECONDS = 14 * 24 * 3600;
const key = (hash: string): string => `web_session:${hash}`;
const userKey = (userId: Id): string => `web_sessions:${userId}`;

export async function createWebSession(core: Core, userId: Id): Promise<string> {
  const id = newSecret();
  const hash = hashSecret(id);
  // Separate commands, not one MULTI: the two keys may live on different Redis Cluster slots.
  await core.redis.set(key(hash), String(userId), 'EX', SESSION_TTL_SECONDS);
  await core.redis.sadd(userKey(userId), hash);
  await core.redis.expire(userKey(userId), SESSION_TTL_SECONDS);
  return id;
}

export async function webSessionUser(core: Core, id: string | undefined): Promise<Id | null> {
  if (!id || id.length > 100) return null;
  const v = await core.redis.get(key(hashSecret(id)));
  return v && /^\d+$/.test(v) ? BigInt(v) : null;
}

export async function destroyWebSession(core: Core, id: string | undefined): Promise<void> {
  if (!id || id.length > 100) return;
  const hash = hashSecret(id);
  const userId = await core.redis.getdel(key(hash));
  if (userId && /^\d+$/.test(userId)) await core.redis.srem(userKey(BigInt(userId)), hash);
}

/** Ends every browser session of a user, but the one whose id is `keep` (the caller's own). */
export async function destroyUserWebSessions(core: Core, userId: Id, keep?: string): Promise<void> {
  const kept = keep && keep.length <= 100 ? hashSecret(keep) : null;
  const hashes = await core.redis.smembers(userKey(userId));
  for (const hash of hashes) {
    if (hash === kept) continue;
    await core.redis.del(key(hash));
    await core.redis.srem(userKey(userId), hash);
  }
}
