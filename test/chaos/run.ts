// npm run chaos [-- --minutes N] [--seed S]: a bounded soak with faults against `npm run cluster`
// (started here when it is not running; same CLUSTER_* variables). Steady load through HAProxy
// (posts with mentions and hashtags, replies, favourites, boosts, deletes, unfollow/follow churn)
// from several client loops, every user on its user stream over WebSocket, and meanwhile, at
// seeded random times, one fault of each kind: kill -9 of a role process (restarted after 5 s, as
// an orchestrator would), kill -9 of a Kafka broker (restarted after 20 s), kill -9 of a Redis
// primary (its replica takes over; the old one rejoins as a replica), a restart of the
// MongoDB-wire server, and HAProxy taking an API process out of rotation for 15 s. At the end,
// after the consumers drained, the invariants are checked and a table printed; exit 1 on any violation.
// Not covered here (yet): inbound federation from a peer, media, direct messages, SSE clients.
import { join } from 'node:path';
import { loadConfig, loadEnvironment } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { clusterServerEnv, clusterSettings, type ClusterSettings } from '../../deploy/local/cluster/topology.ts';
import { startCluster } from '../../deploy/local/cluster/cluster.ts';
import { consumerLag } from '../../deploy/local/cluster/kafka.ts';
import { haproxyCommand } from '../../deploy/local/cluster/haproxy.ts';
import { isRunning, readPidFile, stopProcess } from '../../deploy/local/processes.ts';
import { redisClusterNodesEnv, redisClusterStatus } from '../../deploy/local/redisCluster.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const minutes = arg('minutes', 10);
const seed = arg('seed', Math.floor(Math.random() * 2 ** 31));
const USERS = 16;
const CLIENTS = 4;

/** mulberry32: the run's faults and operations follow from the printed seed. */
function prng(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (m: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${m}`);

interface Posted {
  id: string;
  author: number;
  at: number;
  reply: boolean;
  boost: boolean;
  deleted: boolean;
  /** A delete whose answer never came (refused, timed out, 5xx): either outcome is right. */
  uncertain?: boolean;
  /** What a boost boosts: deleting that deletes the boost too (as Mastodon does). */
  of?: Posted;
}
interface Fault {
  kind: string;
  target: string;
  start: number;
  end: number;
  failed: number;
  recoverySeconds: number;
}

const root = join(import.meta.dirname, '..', '..');
const s: ClusterSettings = clusterSettings(root, loadEnvironment(join(root, '.env')));
const base = `http://127.0.0.1:${s.publicPort}`;

const requests: Array<{ at: number; status: number; op: string }> = [];
async function call(op: string, method: string, path: string, token: string, body?: unknown) {
  let status: number;
  let json: unknown = null;
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    status = res.status;
    const text = await res.text();
    json = text ? (JSON.parse(text) as unknown) : null;
  } catch {
    status = 0; // refused or timed out
  }
  if (op) requests.push({ at: Date.now(), status, op });
  return { status, body: json as Record<string, unknown> & Array<Record<string, unknown>> };
}

function pidOf(name: string): number | null {
  const started = readPidFile(s.runDir, name);
  return started && isRunning(started) ? started.pid : null;
}

async function main(): Promise<void> {
  say(`seed ${seed}, ${minutes} minute(s); cluster on ${base}`);
  await startCluster(s, say);
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...clusterServerEnv(s, { REDIS_CLUSTER_NODES: redisClusterNodesEnv(s.redisPorts, s.host) }),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  const config = loadConfig(env);
  const logger = createLogger('warn', 'chaos');
  const core = await createCore(config, { sink: await createKafkaEventSink(config, logger), logger });
  const users: TestUser[] = [];
  for (let i = 0; i < USERS; i++) users.push(await createTestUser(core));
  const id = (u: number) => String(users[u].account._id);
  const name = (u: number) => users[u].account.username;

  // A stable follow graph (never undone) for the home-feed invariant, and churn pairs besides.
  const stable = new Set<string>();
  for (let a = 0; a < USERS; a++)
    for (const d of [1, 2, 3]) {
      const b = (a + d) % USERS;
      const r = await call('', 'POST', `/api/v1/accounts/${id(b)}/follow`, users[a].token);
      if (r.status !== 200) throw new Error(`setup follow: ${r.status}`);
      stable.add(`${a}>${b}`);
    }
  const churn = Array.from({ length: USERS }, (_, a) => [a, (a + USERS / 2) % USERS] as const);

  // Every user on its user stream, reconnecting as a client would.
  const seen: Array<Set<string>> = users.map(() => new Set());
  let reconnects = 0;
  let running = true;
  const sockets: WebSocket[] = [];
  const openStream = (u: number) => {
    const ws = new WebSocket(`ws://127.0.0.1:${s.publicPort}/api/v1/streaming?stream=user`, [users[u].token]);
    sockets[u] = ws;
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { event?: string; payload?: string };
      if (m.event === 'update') seen[u].add((JSON.parse(m.payload ?? '{}') as { id: string }).id);
    });
    ws.addEventListener('close', () => {
      if (!running) return;
      reconnects++;
      setTimeout(() => openStream(u), 1000);
    });
  };
  users.forEach((_, u) => openStream(u));
  await sleep(3000);

  const posts: Posted[] = [];
  const favourites: Array<{ by: number; status: Posted }> = [];
  let tag = 0;
  const loadStart = Date.now();
  const deadline = loadStart + minutes * 60_000;

  async function client(): Promise<void> {
    while (Date.now() < deadline) {
      const u = Math.floor(random() * USERS);
      const r = random();
      const live = posts.filter((p) => !p.deleted && !p.boost);
      if (r < 0.45 || live.length < 5) {
        const other = (u + 1 + Math.floor(random() * (USERS - 1))) % USERS;
        const res = await call('post', 'POST', '/api/v1/statuses', users[u].token, {
          status: `chaos ${tag++} @${name(other)} #chaos${tag % 5}`,
        });
        if (res.status === 200)
          posts.push({
            id: String(res.body.id),
            author: u,
            at: Date.now(),
            reply: false,
            boost: false,
            deleted: false,
          });
      } else if (r < 0.6) {
        const to = pick(live);
        const res = await call('reply', 'POST', '/api/v1/statuses', users[u].token, {
          status: `@${name(to.author)} reply ${tag++}`,
          in_reply_to_id: to.id,
        });
        if (res.status === 200)
          posts.push({ id: String(res.body.id), author: u, at: Date.now(), reply: true, boost: false, deleted: false });
      } else if (r < 0.75) {
        const to = pick(live);
        if (to.author !== u && !favourites.some((f) => f.by === u && f.status === to)) {
          const res = await call('favourite', 'POST', `/api/v1/statuses/${to.id}/favourite`, users[u].token);
          if (res.status === 200) favourites.push({ by: u, status: to });
        }
      } else if (r < 0.85) {
        const to = pick(live);
        if (to.author !== u) {
          const res = await call('boost', 'POST', `/api/v1/statuses/${to.id}/reblog`, users[u].token);
          if (res.status === 200)
            posts.push({
              id: String(res.body.id),
              author: u,
              at: Date.now(),
              reply: false,
              boost: true,
              deleted: false,
              of: to,
            });
        }
      } else if (r < 0.9) {
        const mine = live.filter((p) => p.author === u);
        if (mine.length > 3) {
          const victim = pick(mine);
          const res = await call('delete', 'DELETE', `/api/v1/statuses/${victim.id}`, users[u].token);
          if (res.status === 200) victim.deleted = true;
          else if (res.status === 0 || res.status >= 500) victim.uncertain = true;
        }
      } else {
        const [a, b] = pick(churn);
        await call('unfollow', 'POST', `/api/v1/accounts/${id(b)}/unfollow`, users[a].token);
        await call('follow', 'POST', `/api/v1/accounts/${id(b)}/follow`, users[a].token);
      }
      await sleep(100 + random() * 200);
    }
  }

  // One fault of each kind, in a seeded order, spread over the run; recovery waits until the
  // cluster is whole again (startCluster starts what is missing and waits for every health check).
  const faults: Fault[] = [];
  async function inject(kind: string): Promise<void> {
    const start = Date.now();
    const before = requests.filter((q) => q.status === 0 || q.status >= 500).length;
    let target: string;
    if (kind === 'role process') {
      const p = pick(s.processes);
      target = p.name;
      const pid = pidOf(p.name);
      if (pid) process.kill(pid, 'SIGKILL');
      await sleep(5000);
    } else if (kind === 'Kafka broker') {
      const k = pick(s.kafka);
      target = `kafka-${k.id}`;
      const pid = pidOf(target);
      if (pid) process.kill(pid, 'SIGKILL');
      await sleep(20_000);
    } else if (kind === 'Redis primary') {
      const status = await redisClusterStatus(join(s.dir, 'redis'), s.redisPorts, s.host);
      const primary = pick(status.nodes.filter((n) => n.role === 'master' && n.pid));
      target = `redis ${primary.port}`;
      if (primary.pid) process.kill(primary.pid, 'SIGKILL');
      await sleep(15_000);
    } else if (kind === 'MongoDB-wire restart') {
      target = 'mongo';
      const pid = pidOf('mongo');
      if (pid) await stopProcess(pid);
    } else {
      const p = pick(s.processes.filter((x) => x.role.kind === 'api'));
      target = p.name;
      await haproxyCommand(s, `disable server api/${p.name}`);
      await sleep(15_000);
      await haproxyCommand(s, `enable server api/${p.name}`);
    }
    const recovering = Date.now();
    await startCluster(s, () => undefined);
    const end = Date.now();
    const failed = requests.filter((q) => q.status === 0 || q.status >= 500).length - before;
    faults.push({ kind, target, start, end, failed, recoverySeconds: (end - recovering) / 1000 });
    say(
      `fault ${kind} (${target}): ${failed} requests failed, whole again ${((end - start) / 1000).toFixed(0)} s after`,
    );
  }
  const kinds = ['role process', 'Kafka broker', 'Redis primary', 'MongoDB-wire restart', 'HAProxy drain'];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const faultDriver = (async () => {
    const slot = (minutes * 60_000) / (kinds.length + 1);
    for (const [i, kind] of kinds.entries()) {
      const at = loadStart + slot * (i + 0.5 + random() * 0.5);
      await sleep(Math.max(0, at - Date.now()));
      say(`injecting: ${kind}`);
      await inject(kind);
    }
  })();
  await Promise.all([...Array.from({ length: CLIENTS }, client), faultDriver]);
  say('load finished; waiting for the consumers to drain');

  // Lag back to 0.
  const drainStart = Date.now();
  let lag: Map<string, number>;
  for (;;) {
    lag = await consumerLag(s, config.kafkaTopicPrefix).catch(() => new Map<string, number>([['?', 1]]));
    if ([...lag.values()].every((v) => v === 0) || Date.now() - drainStart > 180_000) break;
    await sleep(2000);
  }
  const drainSeconds = (Date.now() - drainStart) / 1000;
  await sleep(3000); // pub/sub messages of the last events reach the sockets
  running = false;
  for (const ws of sockets) ws.close();

  // Invariants.
  const violations: string[] = [];
  const inFault = (at: number) => faults.some((f) => at >= f.start && at <= f.end + 5000);
  // Originals first: whether a boost must still exist follows from its original.
  for (const p of [...posts.filter((q) => !q.boost), ...posts.filter((q) => q.boost)]) {
    if (p.of?.deleted) p.deleted = true;
    const res = await call('', 'GET', `/api/v1/statuses/${p.id}`, users[p.author].token);
    if (p.uncertain && (res.status === 200 || res.status === 404)) {
      p.deleted = res.status === 404;
      continue;
    }
    if (p.deleted ? res.status !== 404 : res.status !== 200)
      violations.push(`status ${p.id} (${p.deleted ? 'deleted' : 'kept'}) answers ${res.status}`);
  }
  const homes = new Map<number, Set<string>>();
  const home = async (u: number) => {
    if (!homes.has(u)) {
      const ids = new Set<string>();
      let max = '';
      for (let page = 0; page < 40; page++) {
        const res = await call(
          '',
          'GET',
          `/api/v1/timelines/home?limit=40${max ? `&max_id=${max}` : ''}`,
          users[u].token,
        );
        if (res.status !== 200 || res.body.length === 0) break;
        for (const st of res.body) ids.add(String(st.id));
        max = String(res.body[res.body.length - 1].id);
      }
      homes.set(u, ids);
    }
    return homes.get(u) as Set<string>;
  };
  let expectedLive = 0;
  let seenLive = 0;
  for (const edge of stable) {
    const [a, b] = edge.split('>').map(Number);
    for (const p of posts.filter((q) => q.author === b && !q.deleted && !q.reply && !q.boost)) {
      expectedLive++;
      if (seen[a].has(p.id)) seenLive++;
      if (!(await home(a)).has(p.id)) violations.push(`home of user ${a} lacks post ${p.id} of followed user ${b}`);
    }
  }
  for (const f of favourites.filter((x) => !x.status.deleted)) {
    const res = await call(
      '',
      'GET',
      `/api/v1/notifications?types[]=favourite&account_id=${id(f.by)}&limit=80`,
      users[f.status.author].token,
    );
    const n = (res.body ?? []).filter((x) => (x.status as { id?: string } | null)?.id === f.status.id).length;
    if (n !== 1) violations.push(`favourite of ${f.status.id} by user ${f.by}: ${n} notifications`);
  }
  for (let u = 0; u < USERS; u++) {
    const acct = await call('', 'GET', `/api/v1/accounts/${id(u)}`, users[u].token);
    const followers = await call('', 'GET', `/api/v1/accounts/${id(u)}/followers?limit=80`, users[u].token);
    if (acct.body.followers_count !== followers.body.length)
      violations.push(
        `user ${u}: followers_count ${String(acct.body.followers_count)}, recount ${followers.body.length}`,
      );
    // Recount from the account's statuses (a post whose answer was lost may exist all the same).
    let listed = 0;
    let max = '';
    for (let page = 0; page < 40; page++) {
      const q = `/api/v1/accounts/${id(u)}/statuses?limit=40${max ? `&max_id=${max}` : ''}`;
      const res = await call('', 'GET', q, users[u].token);
      if (res.status !== 200 || res.body.length === 0) break;
      listed += res.body.length;
      max = String(res.body[res.body.length - 1].id);
    }
    if (acct.body.statuses_count !== listed)
      violations.push(`user ${u}: statuses_count ${String(acct.body.statuses_count)}, recount ${listed}`);
  }
  const outside5xx = requests.filter((q) => (q.status >= 500 || q.status === 0) && !inFault(q.at));
  for (const q of outside5xx)
    violations.push(`${q.op} ${q.status ? `answered ${q.status}` : 'got no answer'} outside a fault window`);
  const lagLeft = [...lag].filter(([, v]) => v > 0);
  for (const [g, v] of lagLeft) violations.push(`consumer group ${g} still lags ${v}`);
  await core.close();

  // Tables.
  const ops = new Map<string, { ok: number; failed: number; lost: number; other: number }>();
  for (const q of requests) {
    const o = ops.get(q.op) ?? { ok: 0, failed: 0, lost: 0, other: 0 };
    if (q.status >= 200 && q.status < 300) o.ok++;
    else if (q.status === 0) o.lost++;
    else if (q.status >= 500) o.failed++;
    else o.other++;
    ops.set(q.op, o);
  }
  console.log(`\nchaos run: seed ${seed}, ${minutes} min, ${USERS} users, ${CLIENTS} client loops`);
  console.log('| operation | 2xx | 5xx | refused or timed out | 4xx |\n|---|---|---|---|---|');
  for (const [op, o] of ops) console.log(`| ${op} | ${o.ok} | ${o.failed} | ${o.lost} | ${o.other} |`);
  console.log('\n| fault | target | requests failed | time to whole again (s) |\n|---|---|---|---|');
  for (const f of faults)
    console.log(`| ${f.kind} | ${f.target} | ${f.failed} | ${((f.end - f.start) / 1000).toFixed(0)} |`);
  console.log(
    `\nconsumers drained in ${drainSeconds.toFixed(0)} s; user-stream posts seen live ${seenLive}/${expectedLive} (the rest read from the home timeline); stream reconnects ${reconnects}`,
  );
  console.log(`violations: ${violations.length}`);
  for (const v of violations.slice(0, 50)) console.log(`  ${v}`);
  process.exit(violations.length === 0 ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(`[chaos] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
