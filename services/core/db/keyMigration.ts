// Keys whose names changed for Redis Cluster (hash tags), moved on a single Redis that ran the
// layout before: list feeds, trend counters and rankings, and the status search index, which
// nothing rebuilds by itself. Old home feeds and activity markers are dropped: a home feed is
// rebuilt from MongoDB on its owner's next read (every marker is missing at first: see
// feeds/activity.ts). Caches (documents, viewer flags, follower inboxes) are refilled under their
// new names and their old entries expire within an hour.
// Runs once per Redis namespace (a marker key), in the background of one process (a lock); a key
// written under its new name meanwhile is merged with the old one, not overwritten.
import type { Logger } from '../logger.ts';
import { isCluster, type Redis } from './redis.ts';

interface Rule {
  /** SCAN pattern (before the namespace). */
  match: string;
  /** The new name of an old key; null (or the key itself) when it is not one of the old layout. */
  rename: (key: string) => string | null;
}

/** Old keys that are dropped, not moved (UNLINK: freed in the background). */
const DROP_RULES: { match: string; old: RegExp }[] = [
  { match: 'feed:home:*', old: /^feed:home:\d+(:reblogs)?$/ },
  { match: 'feed:active:*', old: /^feed:active:\d+$/ },
];

const KIND = '(tag|status|link)';

export const KEY_RULES: Rule[] = (
  [
    {
      match: 'feed:list:*',
      rename: (k) => k.replace(/^feed:list:(\d+)(:reblogs)?$/, 'feed:list:{$1}$2'),
    },
    {
      match: 'trends:*',
      rename: (k) =>
        k
          .replace(new RegExp(`^trends:(acc|uses):${KIND}:([^{}]+):(\\d+)$`), 'trends:$1:{$2:$3}:$4')
          .replace(new RegExp(`^trends:lang:${KIND}:([^{}]+)$`), 'trends:lang:{$1:$2}')
          .replace(new RegExp(`^trends:(recent|max|rank|itemlang):${KIND}$`), 'trends:$1:{$2}'),
    },
    { match: 'search:p:*', rename: (k) => k.replace(/^search:p:(.+)$/, 'search:{p}:$1') },
    { match: 'search:u:*', rename: (k) => k.replace(/^search:u:(\d+):(.+)$/, 'search:{u$1}:$2') },
  ] satisfies Rule[]
).map((r) => ({
  match: r.match,
  rename: (k: string) => {
    const to = r.rename(k);
    return to && to !== k ? to : null;
  },
}));

/**
 * KEYS: old, new. Renames when the new key does not exist yet (the time to live goes along);
 * otherwise merges the old into the new (sorted sets: the higher score; sets: union; hashes: the
 * new key's fields win; HyperLogLogs: merged) keeping the new key's time to live, then drops the old.
 */
const MOVE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 1
end
local ttl = redis.call('PTTL', KEYS[2])
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'zset' then
  redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[2], KEYS[1], 'AGGREGATE', 'MAX')
elseif t == 'set' then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
elseif t == 'hash' then
  local kv = redis.call('HGETALL', KEYS[1])
  for i = 1, #kv, 2 do redis.call('HSETNX', KEYS[2], kv[i], kv[i + 1]) end
elseif t == 'string' then
  redis.pcall('PFMERGE', KEYS[2], KEYS[2], KEYS[1])
end
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
redis.call('DEL', KEYS[1])
return 2
`;

const DONE_KEY = 'migrations:cluster-hash-tags';
const LOCK_KEY = `${DONE_KEY}:lock`;
const LOCK_MS = 10 * 60_000;

/**
 * Moves the old layout's keys to their hash-tagged names (and drops old home feeds); a no-op on a
 * cluster (which never held the old layout) and once done. Returns how many keys moved or were
 * dropped (null: not this process's job).
 */
export async function migrateKeyNames(redis: Redis, namespace: string, logger?: Logger): Promise<number | null> {
  if (isCluster(redis)) return null;
  if ((await redis.exists(DONE_KEY)) === 1) return null;
  if ((await redis.set(LOCK_KEY, String(process.pid), 'PX', LOCK_MS, 'NX')) !== 'OK') return null;
  const prefix = namespace ? `${namespace}:` : '';
  let moved = 0;
  try {
    for (const rule of KEY_RULES) {
      let cursor = '0';
      do {
        // SCAN patterns and the keys it returns are not prefixed by the connection.
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}${rule.match}`, 'COUNT', 1000);
        cursor = next;
        const moves = keys
          .map((k) => k.slice(prefix.length))
          .map((k) => [k, rule.rename(k)] as const)
          .filter((m): m is readonly [string, string] => m[1] !== null);
        const results = await Promise.all(moves.map(([from, to]) => redis.eval(MOVE_SCRIPT, 2, from, to)));
        moved += results.filter((r) => Number(r) > 0).length;
        await redis.pexpire(LOCK_KEY, LOCK_MS);
      } while (cursor !== '0');
    }
    for (const rule of DROP_RULES) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}${rule.match}`, 'COUNT', 1000);
        cursor = next;
        const old = keys.map((k) => k.slice(prefix.length)).filter((k) => rule.old.test(k));
        if (old.length > 0) moved += await redis.unlink(...old);
        await redis.pexpire(LOCK_KEY, LOCK_MS);
      } while (cursor !== '0');
    }
    await redis.set(DONE_KEY, new Date().toISOString());
    if (moved > 0) logger?.info({ moved }, 'Redis keys moved to their hash-tagged names');
    return moved;
  } finally {
    await redis.del(LOCK_KEY);
  }
}
