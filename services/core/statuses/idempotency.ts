// Idempotency-Key for posting: the same key from the same account within an hour yields the first
// result, also under concurrent requests. The first request reserves the key in Redis (SET NX) and
// stores its result there; the others wait for that result. If the first request fails, the
// reservation is released and a waiting request takes over.
import { createHash } from 'node:crypto';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { StatusError } from './errors.ts';

export interface IdempotentResult {
  kind: 'status' | 'scheduled';
  id: Id;
}

const TTL_SECONDS = 3600;
const PENDING = 'pending';
const WAIT_MS = 30_000;
const POLL_MS = 25;

// Namespaced by the deployment's prefix: several deployments (and test runs) may share one Redis.
function redisKey(core: Core, accountId: Id, key: string): string {
  return `idempotency:${accountId}:${createHash('sha256').update(key).digest('hex')}`;
}

function parse(value: string): IdempotentResult | null {
  const m = /^(status|scheduled):(\d+)$/.exec(value);
  return m ? { kind: m[1] as IdempotentResult['kind'], id: BigInt(m[2]) } : null;
}

/**
 * Runs `create` once per (account, key) and hour. `replayed` tells whether the result is an
 * earlier request's.
 */
export async function runIdempotent(
  core: Core,
  accountId: Id,
  key: string,
  create: () => Promise<IdempotentResult>,
): Promise<{ result: IdempotentResult; replayed: boolean }> {
  const rkey = redisKey(core, accountId, key);
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const reserved = await core.redis.set(rkey, PENDING, 'EX', TTL_SECONDS, 'NX');
    if (reserved === 'OK') {
      try {
        const result = await create();
        await core.redis.set(rkey, `${result.kind}:${result.id}`, 'EX', TTL_SECONDS);
        return { result, replayed: false };
      } catch (err) {
        await core.redis.del(rkey);
        throw err;
      }
    }
    const value = await core.redis.get(rkey);
    const done = value ? parse(value) : null;
    if (done) return { result: done, replayed: true };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new StatusError('unavailable', 'There was a temporary problem serving your request, please try again');
}
