// `npm run bench -- timelines [--seconds=10] [--concurrency=32] [--rate=1000]`: GET /api/v1/timelines/home?limit=20
// for 1,000 users whose feeds are full (800 entries), against one API process
// (`services/main.ts api`, its own process) on the local servers. Targets: at least 1,000
// requests/s, p99 under 50 ms.
import autocannon from 'autocannon';
import { Worker } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { users, type UserDoc } from '../../services/core/model/users.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { feedKey, feedScore, FEED_MAX_ITEMS } from '../../services/core/feeds/feeds.ts';
import { issueAccessToken } from '../../services/core/oauth/tokens.ts';
import { createTestUser } from '../support/fixtures.ts';
import { closeTestCore } from '../support/core.ts';
import { accountDoc, statusDoc } from './dataSet.ts';
import {
  ms,
  printTable,
  printTargets,
  processCpuSeconds,
  startRole,
  stats,
  stopRole,
  type RoleProcess,
} from './lib.ts';
import { markActive } from '../../services/core/feeds/activity.ts';

/** The API role's V8 flags in package.json's `start` and deploy/ (compose, k8s). */
const API_NODE_FLAGS = '--max-semi-space-size=64';
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const USERS = 1000;
const AUTHORS = 50;
const seconds = Number(option('seconds') ?? 10);
const concurrency = Number(option('concurrency') ?? 32);
const rate = Number(option('rate') ?? 1000);

/**
 * Sends `rate` requests a second for `seconds` on a fixed schedule, from a worker thread (its own
 * heap: this process's collector, busy with the data set, must not delay the sends); latencies
 * from each scheduled start.
 */
async function openLoop(base: string, tokens: string[], rate: number, seconds: number) {
  const worker = new Worker(join(import.meta.dirname, 'openLoop.ts'), { workerData: { base, tokens, rate, seconds } });
  const result = await new Promise<{ samples: number[]; failures: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  if (result.failures > 0) throw new Error(`${result.failures} answers were not 200`);
  return { done: result.samples.length, latency: stats(result.samples) };
}

const name = `bench_timelines_${randomBytes(4).toString('hex')}`;
const mongo = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
mongo.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: mongo.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
});
const core = await createCore(config, { sink: { publish: async () => undefined } });
let api: RoleProcess | null = null;
try {
  // 1,000 users (accounts, users and tokens made through the model; one real sign-up as the template).
  const template = await createTestUser(core);
  const tokens: string[] = [];
  const userDocs: UserDoc[] = [];
  const accountDocs = Array.from({ length: USERS + AUTHORS }, (_, i) => ({ ...accountDoc(10_000 + i), domain: null }));
  await collection(core.db, accounts).insertMany(accountDocs);
  for (let i = 0; i < USERS; i++) {
    const a = accountDocs[i]!;
    userDocs.push({
      ...template.user,
      _id: 10_000n + BigInt(i),
      accountId: a._id,
      email: `${a.username}@bench.test`,
      emailLower: `${a.username}@bench.test`,
    });
  }
  await collection(core.db, users).insertMany(userDocs);
  for (const u of userDocs) {
    tokens.push(
      (await issueAccessToken(core, { appId: template.app._id, userId: u._id, scopes: ['read'], reuse: false })).token,
    );
  }
  // 2,000 statuses by 50 authors; every user's feed holds the newest 800 of them.
  const authors = accountDocs.slice(USERS);
  const docs = Array.from({ length: 2000 }, (_, i) => statusDoc(i, 0, null)).map((s, i) => ({
    ...s,
    accountId: authors[i % AUTHORS]!._id,
  }));
  await collection(core.db, statuses).insertMany(docs);
  const newest = docs.slice(-FEED_MAX_ITEMS);
  for (let i = 0; i < USERS; i += 50) {
    const pipe = core.redis.pipeline();
    for (let k = i; k < Math.min(USERS, i + 50); k++) {
      const key = feedKey('home', userDocs[k]!.accountId);
      for (const s of newest) pipe.zadd(key, feedScore(s._id), String(s._id));
    }
    await pipe.exec();
  }
  // Active users whose feeds are current (else the first read of each rebuilds it).
  await markActive(
    core,
    userDocs.map((u) => u.accountId),
    'ok',
  );

  // BENCH_CPU_PROFILE=<dir>: the API process writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
    : [];
  // BENCH_TRACE_GC=1: the API process logs its garbage collections (to find latency stalls).
  if (process.env.BENCH_TRACE_GC) profile.push('--trace-gc');
  // The API runs as `npm start` and deploy/ run it: with a 64 MB young generation (V8's default
  // lets in-flight requests' objects survive into the old space, whose full collections then
  // stall the process; see the README). BENCH_API_FLAGS='--flag …': more Node/V8 flags for it.
  profile.push(API_NODE_FLAGS, ...(process.env.BENCH_API_FLAGS ?? '').split(' ').filter(Boolean));
  // At `warn`, so that per-request logging stays out of the measurement.
  api = await startRole(config, ['api'], { LOG_LEVEL: 'warn' }, profile);
  if (process.env.BENCH_TRACE_GC || process.env.BENCH_API_FLAGS) api.stdout?.pipe(process.stdout);
  const base = `http://127.0.0.1:${api.port}`;

  const get = async (i: number) => {
    const res = await fetch(`${base}/api/v1/timelines/home?limit=20`, {
      headers: { authorization: `Bearer ${tokens[i % USERS]}` },
    });
    const body = (await res.json()) as unknown[];
    if (res.status !== 200 || body.length !== 20)
      throw new Error(`home timeline: ${res.status}, ${body.length} statuses`);
  };
  // Every user's first page, checked (20 statuses each), which also warms the caches.
  for (let i = 0; i < USERS; i++) await get(i);
  // CPU seconds the API process used (utime + stime, in clock ticks of 1/100 s): per request, a
  // cost the other work on a shared machine does not distort the way it distorts latency.
  const cpuSeconds = () => processCpuSeconds(api!.pid!);
  // Redis's and the load generator's CPU too: with the API's, what one request costs the machine.
  const redisCpu = async () => {
    const info = await core.redis.info('cpu');
    const field = (n: string) => Number(new RegExp(`${n}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    return field('used_cpu_sys') + field('used_cpu_user');
  };
  // The load comes from autocannon (keep-alive connections, bodies not parsed), so that the load
  // generator takes as little of the machine's second core as it can; each request is one user's.
  let n = 0;
  const load = async (opts: { connections: number; overallRate?: number }) => {
    const result = await autocannon({
      url: `${base}/api/v1/timelines/home?limit=20`,
      connections: opts.connections,
      overallRate: opts.overallRate,
      duration: seconds,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${tokens[n++ % USERS]}` } }),
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
      throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`);
    return result;
  };
  // 1. Throughput: as fast as the API answers `concurrency` clients that each send their next
  // request on the previous answer.
  const cpuBefore = await cpuSeconds();
  const redisBefore = await redisCpu();
  const loadBefore = process.cpuUsage();
  const closed = await load({ connections: concurrency });
  const count = closed.requests.total;
  const rps = count / seconds;
  const cpuPerRequest = ((await cpuSeconds()) - cpuBefore) / count;
  const redisPerRequest = ((await redisCpu()) - redisBefore) / count;
  const loadUsage = process.cpuUsage(loadBefore);
  const loadPerRequest = (loadUsage.user + loadUsage.system) / 1e6 / count;
  // 2. Latency at the target rate: one request every 1/rate s, sent on schedule whatever the
  // answers do (open loop; autocannon's rate limit sends each second's quota in a burst), timed
  // from its scheduled start, so any delay on the client's side counts against the server.
  const open = await openLoop(base, tokens, rate, seconds);
  const openRps = open.done / seconds;
  printTable(
    `timelines: home, limit=20, ${USERS} users with full feeds, one API process`,
    [
      'load',
      'requests/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'API CPU ms/request',
      'Redis CPU ms/request',
      'load generator CPU ms/request',
    ],
    [
      [
        `${concurrency} clients, closed loop`,
        String(Math.round(rps)),
        ms(closed.latency.p50),
        ms(closed.latency.p99),
        ms(closed.latency.max),
        ms(cpuPerRequest * 1000),
        ms(redisPerRequest * 1000),
        ms(loadPerRequest * 1000),
      ],
      [
        `${rate} req/s offered, open loop`,
        String(Math.round(openRps)),
        ms(open.latency.p50),
        ms(open.latency.p99),
        ms(open.latency.max),
        '',
        '',
        '',
      ],
    ],
  );
  printTargets('timelines', [
    { what: 'home timeline throughput', measured: `${Math.round(rps)} req/s`, target: '1000 req/s', met: rps >= 1000 },
    {
      what: `home timeline p99 at ${rate} req/s`,
      measured: `${ms(open.latency.p99)} ms`,
      target: '50 ms',
      met: open.latency.p99 < 50 && openRps >= rate * 0.95,
    },
  ]);
} finally {
  await stopRole(api, 10_000); // SIGTERM first: a CPU profile is written on the way out
  await closeTestCore(core).catch(() => undefined);
}
process.exit(0);
