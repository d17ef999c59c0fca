// `npm run bench -- notifications [--accounts=10000] [--requests=300]`: one status favourited by N
// local accounts. The N FavouriteCreated events are on Kafka before a real `pipeline
// notifications` process (services/main.ts) starts; measured: its throughput (events/s, from the
// first notification stored to the last). Then GET /api/v2/notifications for the status's owner
// (one group of N favourites) against a real `api` process, one request after another: p99 under
// 50 ms. Own database, Redis namespace and Kafka topics.
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeTestCore } from '../support/core.ts';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { favourites } from '../../services/core/model/favourites.ts';
import { notifications } from '../../services/core/model/notifications.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { createTestUser } from '../support/fixtures.ts';
import { accountDoc } from './dataSet.ts';
import { ms, printTable, printTargets, startRole, stats, stopRole } from './lib.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(option('accounts') ?? 10_000);
const REQUESTS = Number(option('requests') ?? 300);

const name = `bench_notif_${randomBytes(4).toString('hex')}`;
const mongo = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
mongo.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: mongo.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
  KAFKA_PARTITIONS: '4',
  LOG_LEVEL: 'warn',
});
const logger = createLogger('warn', 'bench');
const sink = await createKafkaEventSink(config, logger);
const core = await createCore(config, { sink });
const children: ChildProcess[] = [];
const rows: string[][] = [];
const result = { throughput: 0, p99: Number.NaN };
try {
  const owner = await createTestUser(core);
  const status = await postStatus(core, owner.account, { text: 'favourite me' });
  const fans = Array.from({ length: N }, (_, i) => ({ ...accountDoc(100_000 + i), domain: null }));
  for (let i = 0; i < N; i += 5000) await collection(core.db, accounts).insertMany(fans.slice(i, i + 5000));
  const now = Date.now();
  for (let i = 0; i < N; i += 5000)
    await collection(core.db, favourites).insertMany(
      fans.slice(i, i + 5000).map((a, k) => ({
        _id: BigInt(1_000_000 + i + k),
        accountId: a._id,
        statusId: status._id,
        createdAt: new Date(now),
      })),
    );
  // The events, as the favourites API publishes them (keyed by the favouriting account).
  for (let i = 0; i < N; i += 1000)
    await sink.publish(
      fans.slice(i, i + 1000).map((a, k) => ({
        eventId: randomUUID(),
        type: 'FavouriteCreated' as const,
        key: String(a._id),
        occurredAt: new Date(),
        payload: {
          favouriteId: String(1_000_000 + i + k),
          accountId: String(a._id),
          statusId: String(status._id),
          statusAccountId: String(owner.account._id),
          createdAt: now,
        },
      })),
    );
  console.log(`  ${N} FavouriteCreated events published; starting the notifications pipeline`);

  children.push(await startRole(config, ['pipeline', 'notifications']));
  const coll = collection(core.db, notifications);
  let first = 0;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const count = await coll.countDocuments({ accountId: owner.account._id });
    if (count > 0 && first === 0) first = Date.now();
    if (count >= N) break;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${N} notifications after 600 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (Date.now() - first) / 1000;
  result.throughput = N / Math.max(seconds, 0.001);
  rows.push([
    `notifications pipeline, ${N} favourites of one status`,
    `${seconds.toFixed(1)} s`,
    `${result.throughput.toFixed(0)} events/s`,
    '',
    '',
  ]);
  await stopRole(children.pop() ?? null);

  const api = await startRole(config, ['api']);
  children.push(api);
  const base = `http://127.0.0.1:${api.port}`;
  const get = async () => {
    const res = await fetch(`${base}/api/v2/notifications`, { headers: { authorization: `Bearer ${owner.token}` } });
    const body = (await res.json()) as { notification_groups: { notifications_count: number }[] };
    if (
      res.status !== 200 ||
      body.notification_groups.length !== 1 ||
      body.notification_groups[0]!.notifications_count !== N
    )
      throw new Error(`GET /api/v2/notifications: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  };
  for (let i = 0; i < 30; i++) await get(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = process.hrtime.bigint();
    await get();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const s = stats(samples);
  result.p99 = s.p99;
  rows.push([`GET /api/v2/notifications, one group of ${N}`, `${REQUESTS} requests`, ms(s.p50), ms(s.p99), ms(s.max)]);
} finally {
  for (const child of children) await stopRole(child);
  // The database, the Redis namespace and the Kafka topics: a broker left with every run's topics
  // starts slowly and answers metadata late.
  await closeTestCore(core).catch(() => undefined);
}

printTable('notifications', ['what', 'size / time', 'p50 ms or rate', 'p99 ms', 'max ms'], rows);
printTargets('notifications', [
  {
    what: `pipeline throughput, ${N} favourites`,
    measured: `${result.throughput.toFixed(0)} events/s`,
    target: 'measured',
    met: result.throughput > 0,
  },
  {
    what: `GET /api/v2/notifications p99 (one group of ${N})`,
    measured: `${ms(result.p99)} ms`,
    target: '50 ms',
    met: result.p99 < 50,
  },
]);
process.exit(0);
