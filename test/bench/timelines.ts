// `npm run bench -- timelines [--seconds=10] [--concurrency=32]`: GET /api/v1/timelines/home?limit=20
// for 1,000 users whose feeds are full (800 entries), against one API process
// (`services/main.ts api`, its own process) on the local servers. Targets: at least 1,000
// requests/s, p99 under 50 ms.
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { readFile } from 'node:fs/promises';
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
import { deleteRedisNamespace } from '../support/core.ts';
import { accountDoc, statusDoc } from './dataSet.ts';
import { ms, printTable, printTargets } from './lib.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const USERS = 1000;
const AUTHORS = 50;
const seconds = Number(option('seconds') ?? 10);
const concurrency = Number(option('concurrency') ?? 32);
const root = join(import.meta.dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
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
let api: ChildProcess | null = null;
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

  const port = await freePort();
  // BENCH_CPU_PROFILE=<dir>: the API process writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
    : [];
  api = spawn(
    process.execPath,
    [...profile, '--disable-warning=TimeoutNegativeWarning', join(root, 'services/main.ts'), 'api'],
    {
      cwd: root,
      env: {
        ...process.env,
        MONGO_URL: config.mongoUrl,
        REDIS_URL: config.redisUrl,
        REDIS_NAMESPACE: config.redisNamespace,
        KAFKA_BROKERS: config.kafkaBrokers.join(','),
        KAFKA_TOPIC_PREFIX: config.kafkaTopicPrefix,
        PORT: String(port),
        STREAMING_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 600) throw new Error('the API did not start');
    if ((await fetch(`${base}/health`).catch(() => null))?.ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }

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
  const cpuSeconds = async () => {
    const fields = (await readFile(`/proc/${api!.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  const cpuBefore = await cpuSeconds();
  // The load comes from autocannon (keep-alive connections, bodies not parsed), so that the load
  // generator takes as little of the machine's second core as it can; each request is one user's.
  let n = 0;
  const result = await autocannon({
    url: `${base}/api/v1/timelines/home?limit=20`,
    connections: concurrency,
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
  const count = result.requests.total;
  const rps = count / seconds;
  const cpuPerRequest = ((await cpuSeconds()) - cpuBefore) / count;
  const s = { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max };
  printTable(
    `timelines: home, limit=20, ${USERS} users with full feeds, ${concurrency} concurrent clients, one API process`,
    ['requests/s', 'p50 ms', 'p99 ms', 'max ms', 'API CPU ms/request'],
    [[String(Math.round(rps)), ms(s.p50), ms(s.p99), ms(s.max), ms(cpuPerRequest * 1000)]],
  );
  printTargets('timelines', [
    { what: 'home timeline throughput', measured: `${Math.round(rps)} req/s`, target: '1000 req/s', met: rps >= 1000 },
    { what: 'home timeline p99', measured: `${ms(s.p99)} ms`, target: '50 ms', met: s.p99 < 50 },
  ]);
} finally {
  if (api && api.exitCode === null) {
    const exited = new Promise((r) => api!.once('exit', r));
    api.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    api.kill('SIGKILL');
  }
  await core.db.dropDatabase().catch(() => undefined);
  await deleteRedisNamespace(core.redis, name).catch(() => undefined);
  await core.close();
}
process.exit(0);
