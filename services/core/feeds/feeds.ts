// Home and list feeds in Redis (Mastodon's FeedManager): capped sorted sets of status ids, newest
// first. A ZSET score is a double (53 bits) and status ids are 64-bit, so the score is the id's
// millisecond part and the member the full id: members of one millisecond sort by their decimal
// string, which for ids of one millisecond is numeric order.
import { slotsApart, type Redis } from '../db/redis.ts';
import { runScript, slotGroups } from '../db/redisSlots.ts';
import type { Id } from '../ids.ts';

/** Mastodon's FeedManager::MAX_ITEMS. */
export const FEED_MAX_ITEMS = 800;
/**
 * A full feed is trimmed back to FEED_MAX_ITEMS once it holds this many entries more: one trim per
 * hundred inserts into a full feed instead of one each (the trim was a third of a busy fan-out's
 * Redis calls). Reads page through whatever the feed holds.
 */
export const FEED_TRIM_SLACK = 100;
/** A reblog of a status among this many newest entries is not inserted again (REBLOG_FALLOFF). */
export const REBLOG_FALLOFF = 40;

export type FeedKind = 'home' | 'list';

/**
 * `feed:<kind>:{<id>}`: the braces are a Redis Cluster hash tag, so the feed, its `:reblogs` and
 * the owner's activity marker (activity.ts) share a slot and one script can touch them together.
 * (Before the tag the key was `feed:<kind>:<id>`; see activeKey for why renaming is safe.)
 */
export function feedKey(kind: FeedKind, id: Id | string): string {
  return `feed:${kind}:{${id}}`;
}

/** Which original statuses are in a feed through a reblog (reblogged id → the reblog's score). */
export function reblogsKey(key: string): string {
  return `${key}:reblogs`;
}

export function feedScore(statusId: Id): number {
  return Number(statusId >> 16n);
}

/**
 * Inserts a status into feeds, server-side in one call (a third of a pipeline's time for a thousand
 * feeds). KEYS, per feed: the feed, then its `<feed>:reblogs` for a reblog, then its activity
 * marker when ARGV[7] is '1' (the feed is written only while the marker exists). ARGV: score,
 * member, MAX_ITEMS, the TTL of a feed it creates (0: none), the reblogged status ('' for none),
 * REBLOG_FALLOFF, markers, FEED_TRIM_SLACK. A reblog of a status that is among a feed's newest REBLOG_FALLOFF
 * entries, itself or through an earlier reblog, is not inserted again (Mastodon's
 * FeedManager#add_to_feed). Returns the 1-based numbers of the feeds that took it now: not those
 * that held it already, so that a fan-out planned again (its first run's offsets were not
 * committed before a crash) announces nothing twice.
 * Each Redis call from Lua costs about a microsecond beyond the command itself, which for a big
 * fan-out is most of Redis's work: a plain status costs two calls per feed (ZADD, then ZCARD,
 * which tells both a feed just created, to give a time to live, and one to trim).
 */
const INSERT_SCRIPT = `
local score, member, max, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local reblogOf, falloff, markers = ARGV[5], tonumber(ARGV[6]), ARGV[7] == '1'
local slack = tonumber(ARGV[8])
local stride = 1
if reblogOf ~= '' then stride = stride + 1 end
if markers then stride = stride + 1 end
local took = {}
for f = 1, #KEYS / stride do
  local base = (f - 1) * stride
  local key = KEYS[base + 1]
  local skip = markers and redis.call('EXISTS', KEYS[base + stride]) == 0
  if not skip and reblogOf ~= '' then
    for _, m in ipairs(redis.call('ZREVRANGE', key, 0, falloff - 1)) do
      if m == reblogOf then skip = true break end
    end
    local rkey = KEYS[base + 2]
    if not skip then
      local already = redis.call('ZSCORE', rkey, reblogOf)
      if already and redis.call('ZCOUNT', key, already, '+inf') <= falloff then skip = true end
    end
    if not skip then
      redis.call('ZADD', rkey, score, reblogOf)
      redis.call('ZREMRANGEBYRANK', rkey, 0, -(max + 1))
      if ttl > 0 then redis.call('EXPIRE', rkey, ttl) end
    end
  end
  if not skip and redis.call('ZADD', key, score, member) == 1 then
    local size = redis.call('ZCARD', key)
    if size == 1 and ttl > 0 then redis.call('EXPIRE', key, ttl) end
    if size > max + slack then redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1)) end
    took[#took + 1] = f
  end
end
return took
`;

interface InsertOptions {
  /** The reblogged status, for a reblog. */
  reblogOf?: Id | null;
  /** Activity markers, one per key: a feed is written only while its marker exists. */
  markers?: string[];
  /** Time to live of a feed this insert creates, in seconds (0: none). */
  ttlSeconds?: number;
}

/** The script's KEYS for these feeds: each feed, its reblogs record for a reblog, its marker if given. */
function insertKeys(keys: string[], positions: number[], reblog: boolean, markers: string[] | null): string[] {
  const out: string[] = [];
  for (const i of positions) {
    out.push(keys[i]!);
    if (reblog) out.push(reblogsKey(keys[i]!));
    if (markers) out.push(markers[i]!);
  }
  return out;
}

/**
 * Inserts a status (or reblog) into feeds; idempotent. The indexes of `keys` that took it now (not
 * those that held it already).
 */
export async function insertIntoFeeds(
  redis: Redis,
  keys: string[],
  statusId: Id,
  opts: InsertOptions = {},
): Promise<number[]> {
  if (opts.markers && opts.markers.length !== keys.length) throw new Error('one marker per feed');
  if (keys.length === 0) return [];
  const reblog = opts.reblogOf != null;
  const args = (markers: boolean) => [
    feedScore(statusId),
    String(statusId),
    FEED_MAX_ITEMS,
    opts.ttlSeconds ?? 0,
    reblog ? String(opts.reblogOf) : '',
    REBLOG_FALLOFF,
    markers ? '1' : '0',
    FEED_TRIM_SLACK,
  ];
  if (slotsApart(redis)) {
    // One call per hash slot (a feed and its marker share one), sent together: the script checks
    // the markers itself, so a slot costs one call and no MGET across slots is needed.
    const took = await Promise.all(
      slotGroups(redis, keys).map(async (group) => {
        const keysOf = insertKeys(keys, group, reblog, opts.markers ?? null);
        const numbers = (await runScript(redis, INSERT_SCRIPT, keysOf, args(!!opts.markers))) as number[];
        return numbers.map((n) => group[n - 1]!);
      }),
    );
    return took.flat().sort((a, b) => a - b);
  }
  let positions = keys.map((_, i) => i);
  if (opts.markers) {
    // One MGET (a native command, a fraction of a microsecond per key) instead of a check per
    // feed inside the script. A marker that expires in between only lets one more status in.
    const marks = await redis.mget(...opts.markers);
    positions = positions.filter((i) => marks[i] !== null);
  }
  if (positions.length === 0) return [];
  // EVAL, not defineCommand: a command defined while an auto-pipeline is open breaks ioredis
  // (redis/ioredis#1931; off in connectRedis, safe if turned on again); Redis keeps the compiled
  // script either way.
  const took = (await runScript(
    redis,
    INSERT_SCRIPT,
    insertKeys(keys, positions, reblog, null),
    args(false),
  )) as number[];
  return took.map((k) => positions[k - 1]!);
}

/**
 * Inserts a status (or a reblog of `reblogOf`) into one feed, whoever owns it; false when the feed
 * held it already, or a reblog of a status that is among the newest entries is skipped. Idempotent.
 */
export async function addToFeed(redis: Redis, key: string, statusId: Id, reblogOf: Id | null = null): Promise<boolean> {
  return (await insertIntoFeeds(redis, [key], statusId, { reblogOf })).length === 1;
}

/**
 * Takes a status out of many feeds in one call, and the status it reblogs (ARGV[2], '' for none)
 * out of their `<feed>:reblogs`. KEYS, per feed: the feed, then its reblogs record when ARGV[2] is
 * not ''. Returns the 1-based numbers of the feeds that held it.
 */
const REMOVE_SCRIPT = `
local stride = 1
if ARGV[2] ~= '' then stride = 2 end
local removed = {}
for f = 1, #KEYS / stride do
  local base = (f - 1) * stride
  if redis.call('ZREM', KEYS[base + 1], ARGV[1]) == 1 then removed[#removed + 1] = f end
  if stride == 2 then redis.call('ZREM', KEYS[base + 2], ARGV[2]) end
end
return removed
`;

/** Removes a status (or reblog) from feeds; the indexes of `keys` that held it. */
export async function removeFromFeeds(
  redis: Redis,
  keys: string[],
  statusId: Id,
  reblogOf: Id | null = null,
): Promise<number[]> {
  const args = [String(statusId), reblogOf !== null ? String(reblogOf) : ''];
  // One call per hash slot on a cluster (sent together); one call on a single Redis.
  const removed = await Promise.all(
    slotGroups(redis, keys).map(async (group) => {
      const keysOf = insertKeys(keys, group, reblogOf !== null, null);
      const numbers = (await runScript(redis, REMOVE_SCRIPT, keysOf, args)) as number[];
      return numbers.map((n) => group[n - 1]!);
    }),
  );
  return removed.flat().sort((a, b) => a - b);
}

export async function removeFromFeed(redis: Redis, key: string, statusIds: Id[], reblogOf: Id[] = []): Promise<void> {
  if (statusIds.length > 0) await redis.zrem(key, ...statusIds.map(String));
  if (reblogOf.length > 0) await redis.zrem(reblogsKey(key), ...reblogOf.map(String));
}

export async function dropFeed(redis: Redis, key: string): Promise<void> {
  await redis.del(key, reblogsKey(key));
}

/** Every id in the feed, newest first (at most FEED_MAX_ITEMS). */
export async function feedIds(redis: Redis, key: string): Promise<Id[]> {
  return (await redis.zrevrange(key, 0, -1)).map((m) => BigInt(m));
}

/**
 * Members read beyond the limit: the ids that share a cursor's millisecond (the score range is
 * inclusive, they are dropped below) would otherwise make a second read necessary.
 */
const PAGE_SLACK = 8;

/**
 * A page of the feed by id cursors, newest first (min_id pages are the ones just above it). Reads
 * only about `limit` members (ZRANGEBYSCORE … LIMIT), not the whole feed: a full feed is 800
 * members, whose strings and BigInts were most of a timeline request's garbage.
 */
export async function feedPage(
  redis: Redis,
  key: string,
  p: { maxId: Id | null; sinceId: Id | null; minId: Id | null; limit: number },
): Promise<Id[]> {
  const max = p.maxId !== null ? String(feedScore(p.maxId)) : '+inf';
  const lower = p.minId ?? p.sinceId;
  const min = lower !== null ? String(feedScore(lower)) : '-inf';
  const inRange = (id: Id): boolean => (p.maxId === null || id < p.maxId) && (lower === null || id > lower);
  // min_id wants the entries just above it: read upwards from it, then turn the page round.
  const oldestFirst = p.minId !== null;
  if (p.limit === 0) {
    // Kept as it always answered: nothing, or for min_id the whole range (slice(-0)).
    if (!oldestFirst) return [];
    return (await redis.zrevrangebyscore(key, max, min)).map((m) => BigInt(m)).filter(inRange);
  }
  for (let count = p.limit + PAGE_SLACK; ; count *= 4) {
    const members = oldestFirst
      ? await redis.zrangebyscore(key, min, max, 'LIMIT', 0, count)
      : await redis.zrevrangebyscore(key, max, min, 'LIMIT', 0, count);
    const ids: Id[] = [];
    for (const m of members) {
      const id = BigInt(m);
      if (inRange(id) && ids.push(id) === p.limit) break;
    }
    // Full, or the range holds no more: done. Otherwise many ids shared a cursor's millisecond.
    if (ids.length === p.limit || members.length < count) return oldestFirst ? ids.reverse() : ids;
  }
}

export async function feedExists(redis: Redis, key: string): Promise<boolean> {
  return (await redis.exists(key)) === 1;
}
