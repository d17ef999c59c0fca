// Home and list feeds in Redis (Mastodon's FeedManager): capped sorted sets of status ids, newest
// first. A ZSET score is a double (53 bits) and status ids are 64-bit, so the score is the id's
// millisecond part and the member the full id: members of one millisecond sort by their decimal
// string, which for ids of one millisecond is numeric order.
import type { Redis } from '../db/redis.ts';
import type { Id } from '../ids.ts';

/** Mastodon's FeedManager::MAX_ITEMS. */
export const FEED_MAX_ITEMS = 800;
/** A reblog of a status among this many newest entries is not inserted again (REBLOG_FALLOFF). */
export const REBLOG_FALLOFF = 40;

export type FeedKind = 'home' | 'list';

export function feedKey(kind: FeedKind, id: Id | string): string {
  return `feed:${kind}:${id}`;
}

/** Which original statuses are in a feed through a reblog (reblogged id → the reblog's score). */
function reblogsKey(key: string): string {
  return `${key}:reblogs`;
}

export function feedScore(statusId: Id): number {
  return Number(statusId >> 16n);
}

/**
 * Inserts a status (or a reblog of `reblogOf`) into a feed; false when a reblog of a status that is
 * already among the newest entries is skipped. Idempotent.
 */
export async function addToFeed(redis: Redis, key: string, statusId: Id, reblogOf: Id | null = null): Promise<boolean> {
  const score = feedScore(statusId);
  if (reblogOf !== null) {
    const newest = await redis.zrevrange(key, 0, REBLOG_FALLOFF - 1);
    if (newest.includes(String(reblogOf))) return false;
    const already = await redis.zscore(reblogsKey(key), String(reblogOf));
    if (already !== null) {
      const rank = await redis.zcount(key, already, '+inf');
      if (rank <= REBLOG_FALLOFF) return false;
    }
    await redis.zadd(reblogsKey(key), score, String(reblogOf));
  }
  await redis
    .multi()
    .zadd(key, score, String(statusId))
    .zremrangebyrank(key, 0, -(FEED_MAX_ITEMS + 1))
    .zremrangebyrank(reblogsKey(key), 0, -(FEED_MAX_ITEMS + 1))
    .exec();
  return true;
}

/** ZADD and trim for every key, server-side: a third of a pipeline's time for a thousand feeds. */
const ADD_TO_FEEDS_SCRIPT = `
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[1], ARGV[2])
  redis.call('ZREMRANGEBYRANK', key, 0, -(tonumber(ARGV[3]) + 1))
end
return #KEYS
`;

/** Inserts one status (not a reblog) into many feeds in one round trip; idempotent. */
export async function addToFeeds(redis: Redis, keys: string[], statusId: Id): Promise<void> {
  if (keys.length === 0) return;
  // EVAL, not defineCommand: a command defined while an auto-pipeline is open breaks ioredis
  // (redis/ioredis#1931); Redis keeps the compiled script either way.
  await redis.eval(ADD_TO_FEEDS_SCRIPT, keys.length, ...keys, feedScore(statusId), String(statusId), FEED_MAX_ITEMS);
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
