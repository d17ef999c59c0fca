// Browser sessions of the OAuth pages (log-in, consent): a random id in a cookie, the user id in
// Redis under the id's hash, expiring after two weeks.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';

export const SESSION_TTL_SECONDS = 14 * 24 * 3600;
const key = (id: string): string => `web_session:${hashSecret(id)}`;

export async function createWebSession(core: Core, userId: Id): Promise<string> {
  const id = newSecret();
  await core.redis.set(key(id), String(userId), 'EX', SESSION_TTL_SECONDS);
  return id;
}

export async function webSessionUser(core: Core, id: string | undefined): Promise<Id | null> {
  if (!id || id.length > 100) return null;
  const v = await core.redis.get(key(id));
  return v && /^\d+$/.test(v) ? BigInt(v) : null;
}

export async function destroyWebSession(core: Core, id: string | undefined): Promise<void> {
  if (id && id.length <= 100) await core.redis.del(key(id));
}
