// Kill -9 a fan-out process in the middle of a 20,000-follower fan-out: after a new process takes
// over, every follower's home feed holds the status, and no follower's stream gets its `update`
// twice. A feed is a sorted set, where a second insert cannot show; the streams can: unacknowledged
// slices are delivered again to the new process, and each follower streaming (every one here) is
// counted per `update` published on their `timeline:<id>` channel.
import { Redis } from 'ioredis';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { follows, type FollowDoc } from '../../../services/core/model/follows.ts';
import { feedKey } from '../../../services/core/feeds/feeds.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import type { StatusDoc } from '../../../services/core/model/statuses.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { killChild, serverEnv, startMain, started, type MainRun } from '../../support/processes.ts';
import { markActive } from '../../../services/core/feeds/activity.ts';
import { batch } from '../../../services/core/db/redis.ts';
import { caughtUp } from '../../support/kafka.ts';
import {
  channelName,
  LISTENER_TTL_SECONDS,
  listenerKey,
  timelineChannels,
} from '../../../services/core/streaming/channels.ts';

const FOLLOWERS = 20_000;
const config = testConfig({ KAFKA_PARTITIONS: '4' });
let core: Core;
const children: MainRun[] = [];
const subscribers: Redis[] = [];

beforeAll(async () => {
  ({ core } = await createTestCore(config));
});

afterAll(async () => {
  await Promise.all(children.map(killChild));
  for (const sub of subscribers) sub.disconnect();
  if (core) await closeTestCore(core);
});

async function fanOutProcess(): Promise<MainRun> {
  const child = startMain(['pipeline', 'fanout'], serverEnv(config, { LOG_LEVEL: 'info' }));
  children.push(child);
  await started(child);
  return child;
}

async function holding(ids: bigint[], statusId: bigint): Promise<number> {
  return (await held(ids, statusId)).size;
}

it('every follower gets the status exactly once after a kill -9 mid-fan-out', async () => {
  const star = await createTestUser(core);
  const template = star.account;
  const ids: bigint[] = [];
  for (let from = 0; from < FOLLOWERS; from += 5000) {
    const batch = Array.from({ length: 5000 }, (_, k) => {
      const id = 5_000_000n + BigInt(from + k);
      ids.push(id);
      return { ...template, _id: id, username: `f${id}`, usernameLower: `f${id}`, uri: `${template.uri}/f${id}` };
    });
    await collection(core.db, accounts).insertMany(batch);
    await collection(core.db, follows).insertMany(
      batch.map((a): FollowDoc => ({
        _id: a._id,
        accountId: a._id,
        targetAccountId: star.account._id,
        showReblogs: true,
        notify: false,
        languages: null,
        uri: null,
        createdAt: new Date(),
      })),
    );
  }
  // As following would have counted them (the fan-out sizes its first cut by the counter).
  await collection(core.db, accounts).updateOne({ _id: star.account._id }, { $set: { followersCount: FOLLOWERS } });
  await markActive(core, ids, 'ok'); // active users: the fan-out writes only their feeds
  // Every follower streams their home timeline (as a streaming server marks it): the fan-out
  // publishes each feed's `update` on its channel.
  const listening = batch(core.redis);
  for (const id of ids) listening.set(listenerKey(timelineChannels.user(id)), '1', 'EX', LISTENER_TTL_SECONDS);
  await listening.exec();
  const updates = await countUpdates();
  const first = await fanOutProcess();
  // Kill it once it has started but not finished: the first follower feed written (a keyspace
  // notification) pauses Redis writes for everyone, so the fan-out cannot finish before the kill.
  // Any follower's feed (their ids start with 5: `feed:home:{5*`). On a Redis Cluster, keyspace notifications and pauses are per node: every primary is watched and paused.
  const urls = await primaryUrls();
  const admins = urls.map((u) => new Redis(u));
  const subs = urls.map((u) => new Redis(u));
  const previous = await Promise.all(
    admins.map(async (a) => ((await a.config('GET', 'notify-keyspace-events')) as [string, string])[1]),
  );
  let status: StatusDoc;
  try {
    await Promise.all(admins.map((a, i) => a.config('SET', 'notify-keyspace-events', `${previous[i]}Kz`)));
    const firstWrite = Promise.race(
      subs.map((sub) => new Promise<void>((resolve) => sub.once('pmessage', () => resolve()))),
    );
    await Promise.all(
      subs.map((sub) =>
        sub.psubscribe(`__keyspace@*__:${config.redisNamespace}:${feedKey('home', '5').replace('}', '*')}`),
      ),
    );
    status = await postStatus(core, star.account, { text: 'to twenty thousand' });
    await firstWrite;
    await Promise.all(admins.map((a) => a.call('CLIENT', 'PAUSE', '30000', 'WRITE')));
    try {
      await killChild(first);
    } finally {
      await Promise.all(admins.map((a) => a.call('CLIENT', 'UNPAUSE')));
    }
  } finally {
    await Promise.all(admins.map((a, i) => a.config('SET', 'notify-keyspace-events', previous[i]!)));
    for (const r of [...subs, ...admins]) r.disconnect();
  }
  const heldBefore = await held(ids, status._id);
  expect(heldBefore.size).toBeGreaterThan(0);
  expect(heldBefore.size).toBeLessThan(FOLLOWERS);

  await fanOutProcess();
  await eventually(async () => (await holding(ids, status._id)) === FOLLOWERS, 120_000, 'every feed holds the status');
  // Every follower the new process wrote gets the status on their stream...
  const newlyWritten = ids.filter((id) => !heldBefore.has(id));
  await eventually(
    async () => newlyWritten.every((id) => (updates.of(id, status._id) ?? 0) >= 1),
    60_000,
    'every follower the new process reached to get the update',
  );
  // ...and no follower gets it twice, those the killed process had written included, whose
  // slices were delivered again (once the new process has committed all it was given).
  await eventually(() => caughtUp(config, 'fanout'), 60_000, 'the fan-out group to commit every slice');
  const twice = ids.filter((id) => (updates.of(id, status._id) ?? 0) > 1);
  expect({ twice: twice.length, example: twice.slice(0, 3).map(String) }).toEqual({ twice: 0, example: [] });
  expect(newlyWritten.length).toBeGreaterThan(0);
}, 360_000);

/** Which of `ids` hold the status in their home feed. */
async function held(ids: bigint[], statusId: bigint): Promise<Set<bigint>> {
  const pipe = batch(core.redis);
  for (const id of ids) pipe.zscore(feedKey('home', id), String(statusId));
  const replies = (await pipe.exec()) ?? [];
  return new Set(ids.filter((_, i) => replies[i]?.[1] !== null));
}

/**
 * Counts the `update` events published on the followers' `timeline:<id>` channels, per follower and
 * status. PUBLISH reaches the subscribers on every node of a cluster: one subscriber hears them all.
 */
async function countUpdates(): Promise<{ of(id: bigint, statusId: bigint): number | undefined }> {
  const sub = new Redis((await primaryUrls())[0]!);
  subscribers.push(sub);
  const counts = new Map<string, number>();
  const prefix = channelName(config, 'timeline:');
  sub.on('pmessage', (_pattern: string, channel: string, raw: string) => {
    const account = channel.slice(prefix.length);
    if (!/^\d+$/.test(account)) return; // timeline:<id>:notifications and the like
    const message = JSON.parse(raw) as { event: string; payload: string };
    if (message.event !== 'update') return;
    const key = `${account}/${(JSON.parse(message.payload) as { id: string }).id}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  await sub.psubscribe(`${prefix}5*`);
  return { of: (id, statusId) => counts.get(`${id}/${statusId}`) };
}

/** The Redis servers that take writes: the one Redis, or each primary of the cluster. */
async function primaryUrls(): Promise<string[]> {
  if (config.redisClusterNodes.length === 0) return [config.redisUrl];
  const seed = new Redis(`redis://${config.redisClusterNodes[0]}`);
  try {
    const nodes = (await seed.call('CLUSTER', 'NODES')) as string;
    return nodes
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => f.length > 2 && f[2]!.split(',').includes('master') && !f[2]!.includes('fail'))
      .map((f) => `redis://${f[1]!.split('@')[0]}`);
  } finally {
    seed.disconnect();
  }
}
