// Work over many feeds at once keeps every command and script within one hash slot: fan-out to
// hundreds of followers (with activity markers), reblogs (with their `:reblogs` records), removal
// from many feeds (a delete), unmerging after a block, the streaming publish to many followers'
// channels, and MGET/DEL over unrelated keys. On a single Redis the same calls run as one script
// or command each; on a Redis Cluster (REDIS_CLUSTER_NODES, or TEST_REDIS_CLUSTER=1 npm test) the
// test first checks that the feeds really lie in many slots on every primary, so a script or
// command over unrelated keys would fail there with CROSSSLOT.
import type { Cluster } from 'ioredis';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { batch, connectRedis, isCluster, slotsApart } from '../../../services/core/db/redis.ts';
import { delAcrossSlots, keySlot, mgetAcrossSlots, slotGroups } from '../../../services/core/db/redisSlots.ts';
import { activeKey, markActive } from '../../../services/core/feeds/activity.ts';
import { fanOutStatus } from '../../../services/core/feeds/fanOut.ts';
import { fanOutStatusOf } from '../../../services/core/feeds/authorSide.ts';
import { feedIds, feedKey, insertIntoFeeds, reblogsKey, removeFromFeeds } from '../../../services/core/feeds/feeds.ts';
import { removeStatusFromFeeds, unmergeFromOwnedFeeds } from '../../../services/core/feeds/maintenance.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import {
  listenerKey,
  publishToStreams,
  timelineChannels,
  channelName,
} from '../../../services/core/streaming/channels.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';

const FOLLOWERS = 300;
let core: Core;
let author: TestUser;
const followers: bigint[] = [];

beforeAll(async () => {
  ({ core } = await createTestCore());
  author = await createTestUser(core);
  const template = author.account;
  for (let i = 0; i < FOLLOWERS; i++) followers.push(7_000_000n + BigInt(i));
  await collection(core.db, accounts).insertMany(
    followers.map((id) => ({
      ...template,
      _id: id,
      username: `f${id}`,
      usernameLower: `f${id}`,
      uri: `${template.uri}/f${id}`,
    })),
  );
  await collection(core.db, follows).insertMany(
    followers.map((id) => ({
      _id: id,
      accountId: id,
      targetAccountId: author.account._id,
      showReblogs: true,
      notify: false,
      languages: null,
      uri: null,
      createdAt: new Date(),
    })),
  );
  await markActive(core, [author.account._id, ...followers], 'ok');
});

afterAll(async () => {
  await closeTestCore(core);
});

const homeKeys = () => followers.map((id) => feedKey('home', id));

async function holding(keys: string[], statusId: bigint): Promise<number> {
  const pipe = batch(core.redis);
  for (const k of keys) pipe.zscore(k, String(statusId));
  return ((await pipe.exec()) ?? []).filter(([err, score]) => !err && score !== null).length;
}

test('the feeds lie in many slots, on every primary of a cluster (one group on a single Redis)', async () => {
  const groups = slotGroups(core.redis, homeKeys());
  // A single Redis that checks slots (REDIS_SLOT_CHECK=1) groups as a cluster does.
  if (!isCluster(core.redis)) return expect(groups.length > 1).toBe(slotsApart(core.redis));
  expect(groups.length).toBeGreaterThan(FOLLOWERS / 2);
  // Which primary serves each slot, from the cluster itself.
  const ranges = await (core.redis as unknown as Cluster).cluster('SLOTS');
  const prefix = `${core.config.redisNamespace}:`;
  const primaries = new Set(
    homeKeys().map((k) => {
      const slot = keySlot(prefix + k);
      const [, , [host, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      return `${host}:${port}`;
    }),
  );
  expect(primaries.size).toBe(ranges.length);
  expect(primaries.size).toBeGreaterThanOrEqual(3);
});

test('a fan-out reaches every active follower; a delete takes it out of every feed', async () => {
  const status = await postStatus(core, author.account, { text: 'across slots', visibility: 'public' });
  const reached = await fanOutStatus(core, fanOutStatusOf(status));
  expect(new Set(reached.home)).toEqual(new Set([author.account._id, ...followers]));
  expect(await holding(homeKeys(), status._id)).toBe(FOLLOWERS);

  const removed = await removeStatusFromFeeds(
    core,
    { statusId: status._id, accountId: author.account._id, mentionedAccountIds: [], tagNames: [] },
    null,
  );
  expect(new Set(removed.home)).toEqual(new Set([author.account._id, ...followers]));
  expect(await holding(homeKeys(), status._id)).toBe(0);
});

test('inactive followers are skipped by their markers, which share their feed’s slot', async () => {
  expect(await mgetAcrossSlots(core.redis, followers.map(activeKey))).toEqual(followers.map(() => 'ok'));
  const inactive = followers.filter((_, i) => i % 3 === 0);
  await delAcrossSlots(core.redis, inactive.map(activeKey));
  try {
    const keys = homeKeys();
    const took = await insertIntoFeeds(core.redis, keys, 7_100_000n << 16n, {
      markers: followers.map(activeKey),
      ttlSeconds: 3600,
    });
    expect(took).toEqual(followers.flatMap((id, i) => (inactive.includes(id) ? [] : [i])));
    expect(await holding(keys, 7_100_000n << 16n)).toBe(FOLLOWERS - inactive.length);
    expect(await removeFromFeeds(core.redis, keys, 7_100_000n << 16n)).toEqual(took);
  } finally {
    await markActive(core, inactive, 'ok');
  }
});

test('reblogs record what they reblog beside each feed; a second reblog is skipped; removal clears both', async () => {
  const keys = homeKeys();
  const original = 7_200_000n << 16n;
  const first = 7_200_001n << 16n;
  const second = 7_200_002n << 16n;
  expect(await insertIntoFeeds(core.redis, keys, first, { reblogOf: original })).toHaveLength(FOLLOWERS);
  expect(await insertIntoFeeds(core.redis, keys, second, { reblogOf: original })).toEqual([]);
  const recorded = batch(core.redis);
  for (const k of keys) recorded.zscore(reblogsKey(k), String(original));
  expect(((await recorded.exec()) ?? []).every(([err, v]) => !err && v !== null)).toBe(true);

  expect(await removeFromFeeds(core.redis, keys, first, original)).toHaveLength(FOLLOWERS);
  const cleared = batch(core.redis);
  for (const k of keys) cleared.zscore(reblogsKey(k), String(original));
  expect(((await cleared.exec()) ?? []).every(([err, v]) => !err && v === null)).toBe(true);
});

test('a block takes the author’s statuses out of the blocker’s feed', async () => {
  const status = await postStatus(core, author.account, { text: 'before the block', visibility: 'public' });
  await fanOutStatus(core, fanOutStatusOf(status));
  const blocker = followers[17]!;
  expect(await feedIds(core.redis, feedKey('home', blocker))).toContain(status._id);
  await unmergeFromOwnedFeeds(core, blocker, author.account._id);
  expect(await feedIds(core.redis, feedKey('home', blocker))).not.toContain(status._id);
  expect(await holding(homeKeys(), status._id)).toBe(FOLLOWERS - 1);
});

test('one message to many followers’ streams reaches the listened channels, whatever their slots', async () => {
  const channels = followers.map((id) => timelineChannels.user(id));
  const listened = [channels[3]!, channels[150]!, channels[299]!];
  const writes = batch(core.redis);
  for (const c of listened) writes.set(listenerKey(c), '1', 'EX', 60);
  await writes.exec();
  const sub = connectRedis(core.config);
  try {
    const got: string[] = [];
    sub.on('message', (channel: string) => got.push(channel));
    await sub.subscribe(...listened.map((c) => channelName(core.config, c)));
    await publishToStreams(core.redis, core.config, channels, { event: 'delete', payload: '1' });
    await eventually(async () => got.length === listened.length, 10_000, 'the listened channels got the message');
    expect(new Set(got)).toEqual(new Set(listened.map((c) => channelName(core.config, c))));
  } finally {
    sub.disconnect();
  }
});
