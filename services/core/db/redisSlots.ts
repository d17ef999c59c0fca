// Redis Cluster hash slots: work over many unrelated keys (feeds of many followers, listener keys
// of many channels) is cut into one group per slot, since a command's or a script's keys must
// share one slot there. On a single Redis everything is one group, so nothing changes.
import { createHash } from 'node:crypto';
import { keySlot } from './hashSlot.ts';
import { isCluster, slotsApart, type Redis } from './redis.ts';

export { keySlot };

function keyPrefix(redis: Redis): string {
  return (redis as unknown as { options: { keyPrefix?: string } }).options.keyPrefix ?? '';
}

/**
 * The positions of `keys` grouped by hash slot (keys as the caller names them, before the
 * namespace prefix). One group of all positions on a single Redis (unless it checks slots).
 */
export function slotGroups(redis: Redis, keys: string[]): number[][] {
  if (!slotsApart(redis)) return keys.length === 0 ? [] : [keys.map((_, i) => i)];
  const prefix = keyPrefix(redis);
  const groups = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = keySlot(prefix + key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/** MGET over keys of any slots: one MGET per slot on a cluster (sent together), one on a single Redis. */
export async function mgetAcrossSlots(redis: Redis, keys: string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (!slotsApart(redis)) return redis.mget(...keys);
  const out = new Array<string | null>(keys.length).fill(null);
  await Promise.all(
    slotGroups(redis, keys).map(async (group) => {
      const values = await redis.mget(...group.map((i) => keys[i]!));
      group.forEach((i, j) => (out[i] = values[j] ?? null));
    }),
  );
  return out;
}

const shas = new Map<string, string>();

/**
 * Runs a Lua script. A single Redis gets EVAL with the text, as before (it keeps the compiled
 * script). A cluster gets EVALSHA (a fan-out sends one call per slot, the text each time would be
 * most of the bytes), and EVAL where a node does not know the script yet.
 */
export async function runScript(
  redis: Redis,
  script: string,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  if (!isCluster(redis)) return redis.eval(script, keys.length, ...keys, ...args);
  let sha = shas.get(script);
  if (!sha) shas.set(script, (sha = createHash('sha1').update(script).digest('hex')));
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return redis.eval(script, keys.length, ...keys, ...args);
  }
}

/** DEL of keys of any slots: one DEL per slot on a cluster (sent together), one on a single Redis. */
export async function delAcrossSlots(redis: Redis, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  if (!slotsApart(redis)) return redis.del(...keys);
  const counts = await Promise.all(slotGroups(redis, keys).map((group) => redis.del(...group.map((i) => keys[i]!))));
  return counts.reduce((a, b) => a + b, 0);
}
