// A home feed keeps its newest FEED_MAX_ITEMS entries: once an insert takes it past FEED_MAX_ITEMS
// plus FEED_TRIM_SLACK it is trimmed back to the newest FEED_MAX_ITEMS; short of that it grows.
import type { Core } from '../../../services/core/context.ts';
import {
  FEED_MAX_ITEMS,
  FEED_TRIM_SLACK,
  feedKey,
  feedScore,
  insertIntoFeeds,
} from '../../../services/core/feeds/feeds.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';

let core: Core;

beforeAll(async () => {
  ({ core } = await createTestCore());
});

afterAll(async () => {
  await closeTestCore(core);
});

/** Status ids one millisecond apart, oldest first. */
const statusIds = (from: number, n: number) => Array.from({ length: n }, (_, i) => BigInt(from + i) << 16n);

async function fill(key: string, ids: bigint[]): Promise<void> {
  await core.redis.zadd(key, ...ids.flatMap((id) => [feedScore(id), String(id)]));
}

it('lets a full feed grow by the slack, then trims it back to its newest FEED_MAX_ITEMS', async () => {
  const key = feedKey('home', 91_001n);
  const old = statusIds(1_000_000, FEED_MAX_ITEMS + FEED_TRIM_SLACK - 1);
  await fill(key, old);

  const within = statusIds(2_000_000, 1)[0]!;
  expect(await insertIntoFeeds(core.redis, [key], within)).toEqual([0]);
  expect(await core.redis.zcard(key)).toBe(FEED_MAX_ITEMS + FEED_TRIM_SLACK);

  const past = statusIds(3_000_000, 1)[0]!;
  expect(await insertIntoFeeds(core.redis, [key], past)).toEqual([0]);
  expect(await core.redis.zcard(key)).toBe(FEED_MAX_ITEMS);
  const newest = await core.redis.zrevrange(key, 0, 1);
  expect(newest).toEqual([String(past), String(within)]);
  // What went is the oldest entries.
  const oldest = await core.redis.zrange(key, 0, 0);
  expect(oldest).toEqual([String(old[old.length - (FEED_MAX_ITEMS - 2)])]);
});
