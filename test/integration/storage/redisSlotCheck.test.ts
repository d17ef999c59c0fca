// The guard against cross-slot regressions: a single Redis with REDIS_SLOT_CHECK=1 (here the
// `checkSlots` option) refuses, as a Redis Cluster does, a command, a script's keys or a MULTI
// spanning hash slots, and the per-slot helpers then cut their work as on a cluster. Run on a
// cluster (TEST_REDIS_CLUSTER=1), the same assertions hold against the real cluster, which shows
// the guard refuses what the cluster refuses.
import { batch, connectRedis, type Redis } from '../../../services/core/db/redis.ts';
import { delAcrossSlots, keySlot, mgetAcrossSlots } from '../../../services/core/db/redisSlots.ts';
import { feedIds, feedKey, insertIntoFeeds, removeFromFeeds } from '../../../services/core/feeds/feeds.ts';
import { testConfig } from '../../support/config.ts';
import { deleteRedisNamespace } from '../../support/core.ts';

const config = testConfig();
// Redis's own error, or ioredis's when it refuses a cluster transaction before sending it.
const CROSS_SLOT = /CROSSSLOT|same slots allocation group/;
let redis: Redis;

beforeAll(() => {
  redis = connectRedis(config, { namespace: config.redisNamespace, checkSlots: true });
});

afterAll(async () => {
  await deleteRedisNamespace(redis, config.redisNamespace);
  redis.disconnect();
});

// Two keys of different slots and two sharing one (a hash tag), as the connection prefixes them.
const prefixed = (k: string) => `${config.redisNamespace}:${k}`;
const [a, b] = ['slot-check:a', 'slot-check:b'];
const [t1, t2] = ['slot-check:{x}:1', 'slot-check:{x}:2'];

test('the keys used really lie in different slots, and the tagged ones in one', () => {
  expect(keySlot(prefixed(a))).not.toBe(keySlot(prefixed(b)));
  expect(keySlot(prefixed(t1))).toBe(keySlot(prefixed(t2)));
});

test('a command, a script or a transaction across slots fails with CROSSSLOT; within one slot it runs', async () => {
  await expect(redis.mget(a, b)).rejects.toThrow(CROSS_SLOT);
  await expect(redis.del(a, b)).rejects.toThrow(CROSS_SLOT);
  await expect(redis.eval('return 1', 2, a, b)).rejects.toThrow(CROSS_SLOT);
  await expect(redis.multi().set(a, '1').set(b, '1').exec()).rejects.toThrow(CROSS_SLOT);

  expect(await redis.mget(t1, t2)).toEqual([null, null]);
  const done = await redis.multi().set(t1, '1').set(t2, '2').exec();
  expect(done?.map(([err]) => err)).toEqual([null, null]);
  expect(await redis.eval("return redis.call('GET', KEYS[2])", 2, t1, t2)).toBe('2');
});

test('the per-slot helpers and many-feed work pass the check', async () => {
  const pipe = batch(redis);
  pipe.set(a, 'A').set(b, 'B');
  expect((await pipe.exec())?.map(([err]) => err)).toEqual([null, null]);
  expect(await mgetAcrossSlots(redis, [a, t1, b])).toEqual(['A', '1', 'B']);
  expect(await delAcrossSlots(redis, [a, b, t1, t2])).toBe(4);

  // A fan-out over feeds of many slots, with activity markers, and its removal.
  const owners = Array.from({ length: 40 }, (_, i) => String(9_100_000 + i));
  const feeds = owners.map((o) => feedKey('home', o));
  const markers = owners.map((o) => `slot-check:marker:{${o}}`);
  for (const m of markers) await redis.set(m, '1');
  const took = await insertIntoFeeds(redis, feeds, 123_456n, { markers: feeds.map((_, i) => markers[i]!) });
  expect(took).toEqual(owners.map((_, i) => i));
  expect(await feedIds(redis, feeds[7]!)).toEqual([123_456n]);
  await removeFromFeeds(redis, feeds, 123_456n);
  expect(await feedIds(redis, feeds[7]!)).toEqual([]);
});
