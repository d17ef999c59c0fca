// `npm run capacity`: cores and memory per role for an instance of 10k, 100k and 1M monthly active
// users, from the benchmarks' CPU time per unit of work (README, docs/benchmarks.md) and stated
// traffic per user (docs/capacity.md explains both). `npm run capacity -- --measure [--seconds N]`
// checks the model against `npm run cluster` (it must be running): a short load of posts (some
// with mentions), home timelines and single statuses through HAProxy, with every user on a user
// stream, while each process's CPU time is read from /proc; it prints the measured CPU split
// between roles next to the split the model predicts for the same operations.
import { join } from 'node:path';
import { loadConfig, loadEnvironment } from '../services/core/config.ts';
import { createCore } from '../services/core/context.ts';
import { createKafkaEventSink } from '../services/core/events/kafkaSink.ts';
import { createLogger } from '../services/core/logger.ts';
import { clusterServerEnv, clusterSettings } from '../deploy/local/cluster/topology.ts';
import { isRunning, readPidFile } from '../deploy/local/processes.ts';
import { redisClusterNodesEnv, redisClusterStatus } from '../deploy/local/redisCluster.ts';
import { processCpuSeconds } from '../test/bench/lib.ts';
import { createTestUser, type TestUser } from '../test/support/fixtures.ts';

/** Where CPU time goes: the Node roles, and the servers they use. */
const GROUPS = [
  'api',
  'streaming',
  'fanout',
  'notifications',
  'delivery',
  'ingress',
  'other pipelines',
  'Redis',
  'MongoDB',
  'Kafka',
] as const;
type Group = (typeof GROUPS)[number];
type Costs = Partial<Record<Group, number>>;

/**
 * CPU milliseconds per unit of work, per group, from the benchmarks (README table, this machine):
 * - post: the `api` bench's 13.6 ms per post for the whole tree (Node 7.2, MongoDB-wire 4.3, Kafka
 *   1.4, Redis 0.7); of the Node part the API request is taken as 4.0 ms, the per-status work of
 *   fan-out (render, follower query) 1.0, the delivery planner 0.5, the other pipelines that read
 *   every status (outbox relay, search index, trends, link previews, replies) 1.7;
 * - feed write: `fanout`, 2.2-2.8 CPU-s per 100,000 feeds (fan-out 1.0, Redis 0.8, MongoDB 0.45);
 * - home read: `timelines`, API 0.63 ms, Redis 0.10 ms; other read: `api` GETs (a status 0.11,
 *   public timeline 0.40, account statuses 0.90 incl. MongoDB 0.18): 0.35 API, 0.05 Redis, 0.05 MongoDB;
 * - notification: `notifications`, 10,000 events in 2.5-5.0 s on two cores shared with MongoDB
 *   and Kafka: 0.4 ms pipeline, 0.4 ms MongoDB;
 * - remote delivery: `delivery`, an RSA-2048 signature (0.9 ms) and a POST: 1.5 ms, Kafka 0.1;
 * - inbound activity: `inbox`, API 0.5 ms, ingress 0.45, MongoDB 0.77, Kafka 0.2;
 * - streamed frame: `streaming`, 1,000 frames per post in 21-47 ms of one process: 0.03 ms.
 */
export const UNIT_COSTS_MS: Record<string, Costs> = {
  post: {
    api: 4.0,
    fanout: 1.0,
    delivery: 0.5,
    'other pipelines': 1.7,
    MongoDB: 4.3,
    Kafka: 1.4,
    Redis: 0.7,
  },
  feedWrite: { fanout: 0.01, Redis: 0.008, MongoDB: 0.0045 },
  homeRead: { api: 0.63, Redis: 0.1 },
  otherRead: { api: 0.35, Redis: 0.05, MongoDB: 0.05 },
  notification: { notifications: 0.4, MongoDB: 0.4 },
  remoteDelivery: { delivery: 1.5, Kafka: 0.1 },
  inbound: { api: 0.5, ingress: 0.45, MongoDB: 0.77, Kafka: 0.2 },
  frame: { streaming: 0.03 },
};

/** Traffic per monthly active user (Mastodon-like instances; docs/capacity.md says why). */
export const TRAFFIC = {
  /** Share of monthly actives active on a day. */
  dailyShare: 0.3,
  /** Statuses (posts, replies, boosts) per daily active user per day. */
  postsPerDau: 2,
  homeReadsPerDau: 60,
  /** Every other API call: notifications, statuses, accounts, relationships, markers, … */
  otherReadsPerDau: 300,
  /** Local feeds written per status: local followers active within the feed window. */
  feedWritesPerPost: 150,
  /** Distinct remote inboxes (shared inboxes) per status. */
  remoteInboxesPerPost: 50,
  notificationsPerPost: 3,
  inboundPerDau: 100,
  /** Streaming connections at the peak, per daily active user. */
  socketsPerDau: 0.25,
  /** The peak hour's rate over the day's average. */
  peakFactor: 2.5,
  /** Cores are sized for this utilisation at the peak. */
  targetUtilisation: 0.6,
};

/** Rates per second at the peak for an instance of `mau` monthly active users. */
function peakRates(mau: number): Record<keyof typeof UNIT_COSTS_MS, number> {
  const t = TRAFFIC;
  const dau = mau * t.dailyShare;
  const perSecond = (perDay: number) => (perDay * t.peakFactor) / 86_400;
  const posts = perSecond(dau * t.postsPerDau);
  const sockets = dau * t.socketsPerDau;
  return {
    post: posts,
    feedWrite: posts * t.feedWritesPerPost,
    homeRead: perSecond(dau * t.homeReadsPerDau),
    otherRead: perSecond(dau * t.otherReadsPerDau),
    notification: posts * t.notificationsPerPost,
    remoteDelivery: posts * t.remoteInboxesPerPost,
    inbound: perSecond(dau * t.inboundPerDau),
    // A frame per feed write whose owner streams now (sockets over daily actives).
    frame: posts * t.feedWritesPerPost * Math.min(1, sockets / dau),
  };
}

/** CPU seconds per group for these amounts of work. */
export function cpuFor(amounts: Partial<Record<keyof typeof UNIT_COSTS_MS, number>>): Record<Group, number> {
  const out = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  for (const [unit, n] of Object.entries(amounts))
    for (const [g, ms] of Object.entries(UNIT_COSTS_MS[unit] ?? {})) out[g as Group] += ((n ?? 0) * ms) / 1000;
  return out;
}

/** Memory in MB per group: processes' base, feeds in Redis, sockets, the MongoDB working set. */
function memoryFor(mau: number, cores: Record<Group, number>): Record<Group, number> {
  const dau = mau * TRAFFIC.dailyShare;
  const processes = (g: Group) => Math.max(1, Math.ceil(cores[g]));
  const nodeBase = { api: 300, streaming: 150, pipeline: 180 };
  // A home feed: 800 entries of about 70 bytes in a sorted set, plus the caches (rendered
  // statuses, documents) at about the same again.
  const feedsMb = (dau * 800 * 70 * 2) / 1e6;
  const socketsMb = (dau * TRAFFIC.socketsPerDau * 20_000) / 1e6;
  // Statuses of the last 30 days at about 2 KB with their indexes, plus accounts and follows.
  const postsPerDay = dau * TRAFFIC.postsPerDau;
  const mongoMb = (postsPerDay * 30 * 2_000 + mau * 20_000) / 1e6;
  return {
    api: processes('api') * nodeBase.api,
    streaming: processes('streaming') * nodeBase.streaming + socketsMb,
    fanout: processes('fanout') * nodeBase.pipeline,
    notifications: processes('notifications') * nodeBase.pipeline,
    delivery: processes('delivery') * nodeBase.pipeline,
    ingress: processes('ingress') * nodeBase.pipeline,
    'other pipelines': 10 * nodeBase.pipeline,
    Redis: 200 + feedsMb,
    MongoDB: 1_000 + mongoMb,
    Kafka: 3 * 1_000,
  };
}

function plan(): void {
  const sizes = [10_000, 100_000, 1_000_000];
  const rows = sizes.map((mau) => {
    const cpu = cpuFor(peakRates(mau));
    const cores = Object.fromEntries(GROUPS.map((g) => [g, cpu[g] / TRAFFIC.targetUtilisation])) as Record<
      Group,
      number
    >;
    return { mau, cores, memory: memoryFor(mau, cores), rates: peakRates(mau) };
  });
  const fmtCores = (c: number) => (c < 0.25 ? '0.25' : c < 10 ? c.toFixed(1) : String(Math.ceil(c)));
  const fmtMem = (mb: number) => (mb < 1024 ? `${Math.round(mb / 10) * 10} MB` : `${(mb / 1024).toFixed(1)} GB`);
  console.log(
    'Peak rates: ' +
      rows
        .map(
          (r) =>
            `${r.mau.toLocaleString('en')} MAU: ${r.rates.post.toFixed(1)} posts/s, ${r.rates.homeRead.toFixed(0)} home reads/s, ${(r.rates.homeRead + r.rates.otherRead).toFixed(0)} API reads/s, ${r.rates.inbound.toFixed(0)} inbound/s`,
        )
        .join('; '),
  );
  console.log(`\n| role | ${rows.map((r) => `${r.mau.toLocaleString('en')} MAU: cores / memory`).join(' | ')} |`);
  console.log(`|---|${rows.map(() => '---').join('|')}|`);
  for (const g of GROUPS)
    console.log(`| ${g} | ${rows.map((r) => `${fmtCores(r.cores[g])} / ${fmtMem(r.memory[g])}`).join(' | ')} |`);
  console.log(
    `| total | ${rows
      .map(
        (r) =>
          `${Math.ceil(GROUPS.reduce((a, g) => a + Math.max(0.25, r.cores[g]), 0))} / ${fmtMem(GROUPS.reduce((a, g) => a + r.memory[g], 0))}`,
      )
      .join(' | ')} |`,
  );
}

/** Which group a process of the local cluster belongs to, by its name in var/cluster/run. */
function groupOf(name: string): Group | null {
  if (name.startsWith('api-')) return 'api';
  if (name.startsWith('streaming-')) return 'streaming';
  if (name.startsWith('kafka-')) return 'Kafka';
  if (name === 'mongo') return 'MongoDB';
  const m = /^pipeline-(.+)-\d+$/.exec(name);
  if (!m) return null;
  const p = m[1]!;
  return p === 'fanout' || p === 'notifications' || p === 'delivery' || p === 'ingress' ? p : 'other pipelines';
}

async function measure(seconds: number): Promise<void> {
  const root = join(import.meta.dirname, '..');
  const s = clusterSettings(root, loadEnvironment(join(root, '.env')));
  const base = `http://127.0.0.1:${s.publicPort}`;
  const pids = new Map<Group, number[]>(GROUPS.map((g) => [g, []]));
  const names = [...s.processes.map((p) => p.name), ...s.kafka.map((k) => `kafka-${k.id}`), 'mongo'];
  for (const name of names) {
    const started = readPidFile(s.runDir, name);
    const g = groupOf(name);
    if (started && isRunning(started) && g) pids.get(g)!.push(started.pid);
  }
  const redis = await redisClusterStatus(join(s.dir, 'redis'), s.redisPorts, s.host);
  for (const n of redis.nodes) if (n.pid) pids.get('Redis')!.push(n.pid);
  if (pids.get('api')!.length === 0) throw new Error('npm run cluster is not running');

  const env: Record<string, string | undefined> = {
    ...process.env,
    ...clusterServerEnv(s, { REDIS_CLUSTER_NODES: redisClusterNodesEnv(s.redisPorts, s.host) }),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  const config = loadConfig(env);
  const logger = createLogger('warn', 'capacity');
  const core = await createCore(config, { sink: await createKafkaEventSink(config, logger), logger });
  const USERS = 20;
  const FOLLOWS = 5;
  const users: TestUser[] = [];
  for (let i = 0; i < USERS; i++) users.push(await createTestUser(core));
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    }).catch(() => null);
    const json = res?.ok ? ((await res.json()) as Record<string, unknown>) : null;
    return { status: res?.status ?? 0, body: json };
  };
  for (let a = 0; a < USERS; a++)
    for (let d = 1; d <= FOLLOWS; d++)
      await call('POST', `/api/v1/accounts/${String(users[(a + d) % USERS]!.account._id)}/follow`, users[a]!.token);
  const sockets = users.map(
    (u) => new WebSocket(`ws://127.0.0.1:${s.publicPort}/api/v1/streaming?stream=user`, [u.token]),
  );
  let frames = 0;
  for (const ws of sockets) ws.addEventListener('message', () => frames++);
  await new Promise((r) => setTimeout(r, 5000));

  const counts = { post: 0, mention: 0, homeRead: 0, otherRead: 0 };
  const statusIds: string[] = [];
  const readCpu = async () =>
    new Map(
      await Promise.all(
        GROUPS.map(
          async (g) =>
            [g, (await Promise.all(pids.get(g)!.map(processCpuSeconds))).reduce((a, b) => a + b, 0)] as const,
        ),
      ),
    );
  // Let the follows' work (feed merges) settle, then measure an idle window of the same length:
  // twenty-odd processes (Kafka's brokers, every consumer's fetch loop) cost CPU without load.
  await new Promise((r) => setTimeout(r, 10_000));
  const idleStart = await readCpu();
  await new Promise((r) => setTimeout(r, (seconds + 15) * 1000));
  const idleEnd = await readCpu();
  const before = await readCpu();
  const framesBefore = frames;
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  const loop = async () => {
    while (Date.now() < deadline) {
      const i = n++;
      const u = i % USERS;
      const kind = i % 10;
      if (kind < 3) {
        const mention = kind === 0 ? `@${users[(u + 7) % USERS]!.account.username} ` : '';
        const res = await call('POST', '/api/v1/statuses', users[u]!.token, { status: `${mention}capacity ${i}` });
        if (res.status === 200) {
          counts.post++;
          if (mention) counts.mention++;
          statusIds.push(String(res.body!.id));
        }
      } else if (kind < 7) {
        if ((await call('GET', '/api/v1/timelines/home?limit=20', users[u]!.token)).status === 200) counts.homeRead++;
      } else if (statusIds.length > 0) {
        const id = statusIds[i % statusIds.length]!;
        if ((await call('GET', `/api/v1/statuses/${id}`, users[u]!.token)).status === 200) counts.otherRead++;
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, loop));
  // The pipelines finish the window's events (fan-out, notifications) before the second reading.
  await new Promise((r) => setTimeout(r, 15_000));
  const after = await readCpu();
  for (const ws of sockets) ws.close();
  await core.close();

  const idle = Object.fromEntries(GROUPS.map((g) => [g, idleEnd.get(g)! - idleStart.get(g)!])) as Record<Group, number>;
  // What the load cost: the window's CPU less the same time idle.
  const measured = Object.fromEntries(
    GROUPS.map((g) => [g, Math.max(0, after.get(g)! - before.get(g)! - idle[g])]),
  ) as Record<Group, number>;
  const window = seconds + 15;
  console.log(
    `\nidle (no load, ${window} s): ${GROUPS.map((g) => `${g} ${(idle[g] / window).toFixed(3)}`).join(', ')} cores`,
  );
  // Each post lands in its author's home feed and the feeds of the FOLLOWS users following them.
  const model = cpuFor({
    post: counts.post,
    feedWrite: counts.post * (FOLLOWS + 1),
    homeRead: counts.homeRead,
    otherRead: counts.otherRead,
    notification: counts.mention,
    frame: frames - framesBefore,
  });
  const total = (r: Record<Group, number>) => GROUPS.reduce((a, g) => a + r[g], 0);
  const mTotal = total(measured);
  const pTotal = total(model);
  console.log(
    `\n${seconds} s through HAProxy: ${counts.post} posts (${counts.mention} with a mention), ${counts.homeRead} home timelines, ${counts.otherRead} statuses read, ${frames - framesBefore} frames streamed`,
  );
  console.log(
    '\n| group | measured CPU-s | share | model CPU-s | share | difference (points) |\n|---|---|---|---|---|---|',
  );
  let worst = 0;
  for (const g of GROUPS) {
    const ms = (measured[g] / mTotal) * 100;
    const ps = (model[g] / pTotal) * 100;
    worst = Math.max(worst, Math.abs(ms - ps));
    console.log(
      `| ${g} | ${measured[g].toFixed(2)} | ${ms.toFixed(1)} % | ${model[g].toFixed(2)} | ${ps.toFixed(1)} % | ${(ms - ps).toFixed(1)} |`,
    );
  }
  console.log(
    `| total | ${mTotal.toFixed(2)} | | ${pTotal.toFixed(2)} | | largest ${worst.toFixed(1)} |\nmeasured/model total: ${(mTotal / pTotal).toFixed(2)}`,
  );
}

const args = process.argv.slice(2);
if (args.includes('--measure')) {
  const i = args.indexOf('--seconds');
  await measure(i >= 0 ? Number(args[i + 1]) : 60);
  process.exit(0);
} else plan();
