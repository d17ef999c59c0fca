// A fan-out that handles its events a second time, as a process does when the one before it
// crashed after handling a batch but before committing its offsets: the feeds already hold the
// statuses (ZADD is idempotent), and no stream gets an `update` twice, neither a follower's, a
// list's, nor the public and hashtag streams.
import { Redis } from 'ioredis';
import type { Core } from '../../../services/core/context.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { batch } from '../../../services/core/db/redis.ts';
import { createKafka } from '../../../services/core/events/kafka.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { markActive } from '../../../services/core/feeds/activity.ts';
import { markFanOutFilters } from '../../../services/core/feeds/fanOutFilters.ts';
import { feedKey } from '../../../services/core/feeds/feeds.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { lists, listMembers } from '../../../services/core/model/lists.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { nextSerialId } from '../../../services/core/ids.ts';
import {
  channelName,
  LISTENER_TTL_SECONDS,
  listenerKey,
  timelineChannels,
} from '../../../services/core/streaming/channels.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { caughtUp, consumerTuning } from '../../support/kafka.ts';

const config = testConfig();
let core: Core;
let pipeline: Pipeline | null = null;
const subscriber = new Redis(config.redisClusterNodes[0] ? `redis://${config.redisClusterNodes[0]}` : config.redisUrl, {
  lazyConnect: true,
});

beforeAll(async () => {
  ({ core } = await createTestCore(config));
});

afterAll(async () => {
  await pipeline?.stop();
  subscriber.disconnect();
  if (core) await closeTestCore(core);
});

/** Every `update` heard on `channels` (unprefixed), as `<channel> <status id>`, in order. */
async function listen(channels: string[]): Promise<string[]> {
  const heard: string[] = [];
  const prefix = channelName(config, '');
  subscriber.on('message', (channel: string, raw: string) => {
    const message = JSON.parse(raw) as { event: string; payload: string };
    if (message.event === 'update')
      heard.push(`${channel.slice(prefix.length)} ${(JSON.parse(message.payload) as { id: string }).id}`);
  });
  await subscriber.connect();
  await subscriber.subscribe(...channels.map((c) => channelName(config, c)));
  // As a streaming server marks the channels it listens to (the fan-out publishes only on those).
  const marks = batch(core.redis);
  for (const c of channels) marks.set(listenerKey(c), '1', 'EX', LISTENER_TTL_SECONDS);
  await marks.exec();
  return heard;
}

/** Sets the fan-out group's committed offsets back to the start of every topic it reads. */
async function forgetCommittedOffsets(): Promise<void> {
  const admin = createKafka(config, createLogger('fatal', 'test'), 'test-rewind').admin();
  await admin.connect();
  try {
    const groupId = `${config.kafkaTopicPrefix}.fanout`;
    for (const { topic } of await admin.fetchOffsets({ groupId })) {
      const partitions = (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.low }));
      await admin.setOffsets({ groupId, topic, partitions });
    }
  } finally {
    await admin.disconnect();
  }
}

async function follow(follower: TestUser, author: TestUser): Promise<void> {
  await collection(core.db, follows).insertOne({
    _id: follower.account._id,
    accountId: follower.account._id,
    targetAccountId: author.account._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: null,
    createdAt: new Date(),
  });
  await collection(core.db, accounts).updateOne({ _id: author.account._id }, { $inc: { followersCount: 1 } });
}

it('handling the same events again announces nothing twice', async () => {
  const author = await createTestUser(core);
  const followers = await Promise.all([1, 2, 3].map(() => createTestUser(core)));
  for (const f of followers) await follow(f, author);
  const listId = await nextSerialId(core.db, lists.name);
  const owner = followers[0]!;
  await collection(core.db, lists).insertOne({
    _id: listId,
    accountId: owner.account._id,
    title: 'watching',
    repliesPolicy: 'list',
    exclusive: false,
    createdAt: new Date(),
  });
  // Written straight to MongoDB, so flagged as addListMembers would (ADR 0020).
  await markFanOutFilters(core, [author.account._id]);
  await collection(core.db, listMembers).insertOne({
    _id: listId,
    listId,
    ownerId: owner.account._id,
    accountId: author.account._id,
    createdAt: new Date(),
  });
  await markActive(
    core,
    followers.map((f) => f.account._id),
    'ok',
  );
  const tag = `replayed${Date.now()}`;
  const channels = [
    ...followers.map((f) => timelineChannels.user(f.account._id)),
    timelineChannels.list(listId),
    timelineChannels.public('all'),
    timelineChannels.public('local'),
    timelineChannels.hashtag(tag),
  ];
  const heard = await listen(channels);

  pipeline = await runFanOutPipeline(core, consumerTuning);
  const status = await postStatus(core, author.account, { text: `to everyone #${tag}`, visibility: 'public' });
  const once = channels.map((c) => `${c} ${status._id}`).sort();
  await eventually(async () => once.every((line) => heard.includes(line)), 30_000, 'every stream to get the update');
  await eventually(() => caughtUp(config, 'fanout'), 30_000, 'the fan-out to commit');
  await pipeline.stop();
  pipeline = null;

  // As after a crash before the commit: the same events handled again by a new consumer.
  await forgetCommittedOffsets();
  expect(await caughtUp(config, 'fanout')).toBe(false);
  pipeline = await runFanOutPipeline(core, consumerTuning);
  await eventually(() => caughtUp(config, 'fanout'), 30_000, 'the fan-out to handle the events again');
  // Something the replayed fan-out surely announced after the first status, so that its own
  // announcements (if any) have come too: a second status to the same streams.
  const next = await postStatus(core, author.account, { text: `again #${tag}`, visibility: 'public' });
  const nextOnce = channels.map((c) => `${c} ${next._id}`);
  await eventually(async () => nextOnce.every((line) => heard.includes(line)), 30_000, 'the second status everywhere');

  expect(heard.filter((line) => line.endsWith(` ${status._id}`)).sort()).toEqual(once);
  for (const f of followers)
    expect(await core.redis.zscore(feedKey('home', f.account._id), String(status._id))).not.toBeNull();
}, 120_000);
