// A single Redis that ran the layout before the Redis Cluster hash tags keeps its list feeds, trend
// counters and search index: services/core/db/keyMigration.ts moves them to their new names once,
// merging with what was already written under the new name, and drops the old home feeds. (A cluster never held the old layout:
// there the migration does nothing, which the second test checks.)
import { connectRedis, type Redis } from '../../../services/core/db/redis.ts';
import { migrateKeyNames } from '../../../services/core/db/keyMigration.ts';
import { feedKey, feedIds } from '../../../services/core/feeds/feeds.ts';
import { trendKeys } from '../../../services/core/trends/counters.ts';
import { postingKey } from '../../../services/core/search/statusIndex.ts';
import { testConfig } from '../../support/config.ts';
import { deleteRedisNamespace } from '../../support/core.ts';

const config = testConfig();
let redis: Redis;
beforeAll(() => {
  redis = connectRedis(config, { namespace: config.redisNamespace });
});
afterAll(async () => {
  await deleteRedisNamespace(redis, config.redisNamespace);
  redis.disconnect();
});

const onCluster = config.redisClusterNodes.length > 0;
const single = onCluster ? test.skip : test;

single('old list feeds, trends and search postings move to their hash-tagged names, once', async () => {
  await redis.zadd('feed:list:42', 1, '100', 2, '200');
  await redis.zadd('feed:list:42:reblogs', 1, '7');
  await redis.zadd(feedKey('list', '42'), 3, '300'); // written under the new name since the upgrade
  await redis.expire(feedKey('list', '42'), 1000);
  await redis.pfadd('trends:acc:tag:cats:20000', 'a', 'b');
  await redis.pfadd(trendKeys.accounts('tag', 'cats', 20000), 'c');
  await redis.hset('trends:lang:tag:cats', 'en', '3');
  await redis.zadd('trends:recent:tag', 5, 'cats');
  await redis.zadd('search:p:cats', 1, '100');
  await redis.zadd('search:u:9:cats', 1, '100');
  await redis.set('trends:refresh-lock', '1'); // not of the old layout: stays
  // Old home feeds and markers are dropped (rebuilt on the next read), new ones stay.
  await redis.zadd('feed:home:5', 1, '100');
  await redis.zadd('feed:home:5:reblogs', 1, '7');
  await redis.set('feed:active:5', 'ok');
  await redis.zadd(feedKey('home', '6'), 1, '100');

  expect(await migrateKeyNames(redis, config.redisNamespace)).toBe(10);
  expect(await redis.exists('feed:home:5', 'feed:home:5:reblogs', 'feed:active:5')).toBe(0);
  expect(await feedIds(redis, feedKey('home', '6'))).toEqual([100n]);

  expect(await feedIds(redis, feedKey('list', '42'))).toEqual([300n, 200n, 100n]);
  expect(await redis.ttl(feedKey('list', '42'))).toBeGreaterThan(900);
  expect(await redis.zrange(`${feedKey('list', '42')}:reblogs`, 0, -1)).toEqual(['7']);
  expect(await redis.pfcount(trendKeys.accounts('tag', 'cats', 20000))).toBe(3);
  expect(await redis.hget(trendKeys.language('tag', 'cats'), 'en')).toBe('3');
  expect(await redis.zscore(trendKeys.recent('tag'), 'cats')).toBe('5');
  expect(await redis.zscore(postingKey('public', 'cats'), '100')).toBe('1');
  expect(await redis.zscore(postingKey(9n, 'cats'), '100')).toBe('1');
  expect(
    await redis.exists(
      'feed:list:42',
      'feed:list:42:reblogs',
      'trends:acc:tag:cats:20000',
      'trends:lang:tag:cats',
      'trends:recent:tag',
      'search:p:cats',
      'search:u:9:cats',
    ),
  ).toBe(0);
  expect(await redis.get('trends:refresh-lock')).toBe('1');

  // Done once: old keys that appear later (an old process still running) are not its job.
  await redis.zadd('feed:list:43', 1, '100');
  expect(await migrateKeyNames(redis, config.redisNamespace)).toBeNull();
  expect(await redis.exists('feed:list:43')).toBe(1);
});

const cluster = onCluster ? test : test.skip;

cluster('on a Redis Cluster there is nothing to move', async () => {
  expect(await migrateKeyNames(redis, config.redisNamespace)).toBeNull();
});
