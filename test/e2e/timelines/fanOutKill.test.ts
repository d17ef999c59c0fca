// Kill -9 a fan-out process in the middle of a 20,000-follower fan-out: after a new process takes
// over, every follower's home feed holds the status exactly once (unacknowledged slices are
// delivered again, and feed writes are idempotent).
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

const FOLLOWERS = 20_000;
const config = testConfig({ KAFKA_PARTITIONS: '4' });
let core: Core;
const children: MainRun[] = [];

beforeAll(async () => {
  ({ core } = await createTestCore(config));
});

afterAll(async () => {
  await Promise.all(children.map(killChild));
  if (core) await closeTestCore(core);
});

async function fanOutProcess(): Promise<MainRun> {
  const child = startMain(['pipeline', 'fanout'], serverEnv(config, { LOG_LEVEL: 'info' }));
  children.push(child);
  await started(child);
  return child;
}

async function holding(ids: bigint[], statusId: bigint): Promise<number> {
  const pipe = batch(core.redis);
  for (const id of ids) pipe.zscore(feedKey('home', id), String(statusId));
  return ((await pipe.exec()) ?? []).filter(([, score]) => score !== null).length;
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
  const before = await holding(ids, status._id);
  expect(before).toBeGreaterThan(0);
  expect(before).toBeLessThan(FOLLOWERS);

  await fanOutProcess();
  await eventually(async () => (await holding(ids, status._id)) === FOLLOWERS, 120_000, 'every feed holds the status');
  const pipe = batch(core.redis);
  for (const id of ids.slice(0, 500)) pipe.zcard(feedKey('home', id));
  for (const [, count] of (await pipe.exec()) ?? []) expect(count).toBe(1);
}, 240_000);

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
