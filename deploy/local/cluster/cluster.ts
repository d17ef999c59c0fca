// Starts, stops and reports the local production topology (see topology.ts): three Kafka nodes,
// a Redis Cluster, the MongoDB-wire server, every role and pipeline as its own detached process,
// and HAProxy in front. Everything runs under the cluster directory with pid files in run/ and
// logs in log/; stop stops only what those pid files name, and returns when all of it has exited.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEnvironment } from '../../../services/core/config.ts';
import { ensureDebianPackages, ensureKafka, ensureMongoServer, ensureCacheDir } from '../install.ts';
import {
  diedStarting,
  isRunning,
  readPidFile,
  sleep,
  startDetached,
  stopStarted,
  withLock,
  type Started,
} from '../processes.ts';
import { probeMongo } from '../probes.ts';
import { redisClusterNodesEnv, redisClusterStatus, startRedisCluster, stopRedisCluster } from '../redisCluster.ts';
import { serverSpecs } from '../servers.ts';
import { haproxyServerStates, prepareHaproxy } from './haproxy.ts';
import { consumerLag, kafkaBrokerCount, prepareKafkaNodes } from './kafka.ts';
import { clusterServerEnv, roleLabel, type ClusterSettings, type RoleProcess } from './topology.ts';

type Say = (message: string) => void;

const START_TIMEOUT_MS = 240_000;

function redisDir(s: ClusterSettings): string {
  return join(s.dir, 'redis');
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts one detached process unless ours is already running; returns it. */
function ensureProcess(
  s: ClusterSettings,
  name: string,
  command: string,
  args: string[],
  say: Say,
  env?: NodeJS.ProcessEnv,
): Started {
  const previous = readPidFile(s.runDir, name);
  if (previous && isRunning(previous)) return previous;
  const logFile = join(s.logDir, `${name}.log`);
  say(`starting ${name} (log: ${logFile})`);
  return startDetached({ name, command, args, runDir: s.runDir, logFile, cwd: s.dir, env });
}

async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  alive: () => string | null,
  timeoutMs = START_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    const dead = alive();
    if (dead) throw new Error(dead);
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs / 1000}s`);
    await sleep(500);
  }
}

function exited(s: ClusterSettings, started: Started, name: string): string | null {
  return !diedStarting(started)
    ? null
    : `${name} exited during start-up; last lines of its log:\n${tail(join(s.logDir, `${name}.log`))}`;
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export function installCluster(s: ClusterSettings, say: Say): void {
  ensureCacheDir(s.infra);
  ensureDebianPackages(
    { 'redis-server': 'redis-server', 'redis-cli': 'redis-tools', haproxy: 'haproxy', ffmpeg: 'ffmpeg' },
    say,
  );
  ensureKafka(s.infra, say);
  ensureMongoServer(s.infra, say);
}

/** Brings the whole topology up (reusing what already runs) and waits until HAProxy serves both backends. */
export async function startCluster(s: ClusterSettings, say: Say): Promise<void> {
  mkdirSync(s.logDir, { recursive: true });
  installCluster(s, say);
  await withLock(s.runDir, async () => {
    // The stateful servers, side by side: Kafka's three nodes must start together to form a quorum.
    const kafka = prepareKafkaNodes(s).map((node) => ({
      node,
      started: ensureProcess(s, node.name, node.command, node.args, say),
    }));
    const mongoSpec = serverSpecs(s.infra).mongo;
    const mongoPrepared = (await mongoSpec.probe()) === 'ready' ? null : mongoSpec.prepare();
    const mongo = mongoPrepared ? ensureProcess(s, 'mongo', mongoPrepared.command, mongoPrepared.args, say) : null;
    await Promise.all([
      waitUntil(
        `Kafka (${s.kafka.length} brokers)`,
        async () => (await kafkaBrokerCount(s)) === s.kafka.length,
        () => kafka.map((k) => exited(s, k.started, k.node.name)).find(Boolean) ?? null,
      ),
      startRedisCluster({
        dir: redisDir(s),
        ports: s.redisPorts,
        host: s.host,
        log: say,
        timeoutS: 120,
        // Bus ports base+80..85: every port of the cluster stays within its 200.
        busPortOffset: 50,
      }),
      mongo
        ? waitUntil(
            'MongoDB-wire server',
            async () => (await probeMongo(s.host, s.mongoPort)) === 'ready',
            () => exited(s, mongo, 'mongo'),
          )
        : Promise.resolve(),
    ]);
    say(`Kafka (${s.kafka.length} brokers), Redis Cluster and the MongoDB-wire server are ready`);

    const env: NodeJS.ProcessEnv = {
      ...loadEnvironment(join(s.root, '.env')),
      ...clusterServerEnv(s, { REDIS_CLUSTER_NODES: redisClusterNodesEnv(s.redisPorts, s.host) }),
    };
    // REDIS_CLUSTER_NODES names the servers; a REDIS_URL from the caller's environment must not win.
    delete env.REDIS_URL;
    const main = join(s.root, 'services/main.ts');
    const node = process.execPath;
    const nodeArgs = [main];
    const startRole = (p: RoleProcess) =>
      ensureProcess(s, p.name, node, [...nodeArgs, ...p.args], say, {
        ...env,
        // A role binds only the port it serves: PORT (api, a pipeline's probes) or STREAMING_PORT.
        PORT: String(p.port),
        STREAMING_PORT: String(p.port),
      });
    const waitHealthy = (p: RoleProcess, started: Started) =>
      waitUntil(
        p.name,
        () => httpOk(`http://${s.host}:${p.port}${p.healthPath}`),
        () => exited(s, started, p.name),
      );
    // The first API process creates the topics; the others then start without racing to.
    const [first, ...rest] = s.processes;
    await waitHealthy(first, startRole(first));
    const started = rest.map((p) => ({ p, started: startRole(p) }));
    const haproxy = prepareHaproxy(s);
    const lb = ensureProcess(s, 'haproxy', haproxy.command, haproxy.args, say);
    await Promise.all(started.map(({ p, started: st }) => waitHealthy(p, st)));
    const base = `http://${s.host}:${s.publicPort}`;
    await waitUntil(
      'HAProxy',
      async () => (await httpOk(`${base}/health/ready`)) && (await httpOk(`${base}/api/v1/streaming/health`)),
      () => exited(s, lb, 'haproxy'),
    );
  });
  say(`cluster ready: http://localhost:${s.publicPort} (HAProxy stats on http://${s.host}:${s.haproxyStatsPort}/)`);
}

/** Names of the processes this cluster started (pid files), outside the Redis Cluster's own directory. */
function startedNames(s: ClusterSettings): string[] {
  if (!existsSync(s.runDir)) return [];
  return readdirSync(s.runDir)
    .filter((f) => f.endsWith('.pid'))
    .map((f) => f.slice(0, -4));
}

/**
 * Stops in order: HAProxy (no new requests), the API and streaming processes (drain), the pipelines
 * (commit what they finished), then the servers. Returns when every process it stopped has exited.
 */
export async function stopCluster(s: ClusterSettings, say: Say): Promise<void> {
  const names = startedNames(s);
  const roleNames = new Set(s.processes.map((p) => p.name));
  const tiers: string[][] = [
    names.filter((n) => n === 'haproxy'),
    names.filter((n) => /^(api|streaming)-/.test(n)),
    names.filter((n) => n.startsWith('pipeline-') || (roleNames.has(n) && !/^(api|streaming)-/.test(n))),
    names.filter((n) => n === 'mongo' || n.startsWith('kafka-')),
  ];
  const tiered = new Set(tiers.flat());
  tiers[2].push(...names.filter((n) => !tiered.has(n)));
  for (const tier of tiers) {
    await Promise.all(
      tier.map(async (name) => {
        if (await stopStarted(s.runDir, name, name.startsWith('kafka-') ? 60_000 : 30_000)) say(`stopped ${name}`);
      }),
    );
  }
  await stopRedisCluster(redisDir(s), (m) => say(m));
}

export interface StatusRow {
  name: string;
  role: string;
  pid: string;
  health: string;
  lag: string;
}

/** One row per process of the topology: role, pid (or "-" when not running), health and consumer lag. */
export async function clusterStatus(s: ClusterSettings): Promise<StatusRow[]> {
  const prefix = loadEnvironment(join(s.root, '.env')).KAFKA_TOPIC_PREFIX || 'fedi';
  const pidOf = (name: string) => {
    const started = readPidFile(s.runDir, name);
    return started && isRunning(started) ? String(started.pid) : '-';
  };
  const [lag, lb, brokers, redis, mongo] = await Promise.all([
    consumerLag(s, prefix).catch(() => new Map<string, number>()),
    haproxyServerStates(s).catch(() => new Map<string, string>()),
    kafkaBrokerCount(s),
    redisClusterStatus(redisDir(s), s.redisPorts, s.host),
    probeMongo(s.host, s.mongoPort),
  ]);
  const rows: StatusRow[] = [];
  rows.push({
    name: 'haproxy',
    role: `load balancer :${s.publicPort}`,
    pid: pidOf('haproxy'),
    health: lb.size > 0 ? 'up' : 'down',
    lag: '',
  });
  for (const k of s.kafka)
    rows.push({
      name: `kafka-${k.id}`,
      role: `kafka broker+controller :${k.port}`,
      pid: pidOf(`kafka-${k.id}`),
      health: `${brokers}/${s.kafka.length} brokers registered`,
      lag: '',
    });
  for (const n of redis.nodes)
    rows.push({
      name: `redis-${n.port}`,
      role: `redis ${n.role === 'master' ? 'primary' : n.role === 'slave' ? 'replica' : '?'} :${n.port}`,
      pid: n.pid ? String(n.pid) : '-',
      health: `${n.state}, cluster ${redis.state}`,
      lag: '',
    });
  rows.push({ name: 'mongo', role: `MongoDB-wire :${s.mongoPort}`, pid: pidOf('mongo'), health: mongo, lag: '' });
  const health = await Promise.all(
    s.processes.map((p) =>
      httpOk(`http://${s.host}:${p.port}${p.healthPath}`).then((ok) => (ok ? 'ready' : 'not ready')),
    ),
  );
  s.processes.forEach((p, i) => {
    const inLb = lb.get(p.name);
    const groups =
      p.role.kind === 'pipeline'
        ? [p.role.name, ...(p.role.name === 'delivery' ? ['delivery-worker'] : [])].filter((g) => lag.has(g))
        : [];
    rows.push({
      name: p.name,
      role: `${roleLabel(p.role)} :${p.port}`,
      pid: pidOf(p.name),
      health: `${health[i]}${inLb ? `, haproxy ${inLb}` : ''}`,
      lag: groups.map((g) => `${g} ${lag.get(g)}`).join(', '),
    });
  });
  return rows;
}

export function formatStatus(rows: StatusRow[]): string[] {
  const header: StatusRow = { name: 'PROCESS', role: 'ROLE', pid: 'PID', health: 'HEALTH', lag: 'CONSUMER LAG' };
  const all = [header, ...rows];
  const width = (k: keyof StatusRow) => Math.max(...all.map((r) => r[k].length));
  const keys: Array<keyof StatusRow> = ['name', 'role', 'pid', 'health', 'lag'];
  const widths = keys.map(width);
  return all.map((r) =>
    keys
      .map((k, i) => r[k].padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}
