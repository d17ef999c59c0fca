// A local Redis Cluster from Debian's redis-server: three primaries and three replicas, one
// directory per node under `dir`, persistence as the single local Redis has it (AOF, fsync every
// second, no RDB snapshots), detached with pid files like the other local servers. Created once
// with `redis-cli --cluster create`; later starts reuse nodes.conf and the cluster re-forms itself.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { probeRedis } from './probes.ts';
import { diedStarting, isRunning, readPidFile, sleep, startDetached, stopStarted, withLock } from './processes.ts';

type Say = (message: string) => void;

export interface RedisClusterOptions {
  /** Everything of the cluster lives here: node data in node-<port>/, pid files in run/, logs in log/. */
  dir: string;
  /** Six ports: the first three become primaries, the others their replicas. */
  ports: number[];
  host?: string;
  log?: Say;
  /** Seconds to wait for the cluster to report cluster_state:ok. */
  timeoutS?: number;
  /** Each node's cluster bus listens on its port plus this (Redis's default: 10000). */
  busPortOffset?: number;
}

export interface RedisClusterNode {
  port: number;
  pid: number | null;
  state: 'ready' | 'closed' | 'foreign';
  role: 'master' | 'slave' | 'unknown';
  /** Hash slot ranges a primary serves, e.g. "0-5460". */
  slots: string;
}

export interface RedisClusterStatus {
  /** cluster_state as a reachable node reports it, or "down" when none answers. */
  state: string;
  nodes: RedisClusterNode[];
}

const HOST = '127.0.0.1';
const nodeName = (port: number) => `redis-cluster-${port}`;
const runDir = (dir: string) => join(dir, 'run');
const logDir = (dir: string) => join(dir, 'log');

/** Value for REDIS_CLUSTER_NODES. */
export function redisClusterNodesEnv(ports: number[], host = HOST): string {
  return ports.map((p) => `${host}:${p}`).join(',');
}

/**
 * Starts (or reuses) the six nodes, creates the cluster the first time, and waits until every
 * slot is served. Returns the nodes as host:port, the value of REDIS_CLUSTER_NODES.
 */
export async function startRedisCluster(opts: RedisClusterOptions): Promise<{ nodes: string[] }> {
  const { dir, ports } = opts;
  const host = opts.host ?? HOST;
  const say = opts.log ?? (() => undefined);
  if (ports.length !== 6 || new Set(ports).size !== 6) throw new Error('a Redis Cluster here needs six distinct ports');
  const nodes = ports.map((p) => `${host}:${p}`);
  await withLock(runDir(dir), async () => {
    mkdirSync(logDir(dir), { recursive: true });
    for (const port of ports) {
      const state = await probeRedis(host, port);
      if (state === 'foreign') throw new Error(`${host}:${port} is taken by something that is not Redis`);
      if (state === 'ready') continue;
      const previous = readPidFile(runDir(dir), nodeName(port));
      if (previous && isRunning(previous)) continue;
      const nodeDir = join(dir, `node-${port}`);
      mkdirSync(nodeDir, { recursive: true });
      const logFile = join(logDir(dir), `${nodeName(port)}.log`);
      say(`starting Redis Cluster node on ${host}:${port} (log: ${logFile})`);
      startDetached({
        name: nodeName(port),
        command: 'redis-server',
        args: [
          '--bind',
          host,
          '--port',
          String(port),
          '--dir',
          nodeDir,
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(port + (opts.busPortOffset ?? 10_000)),
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '5000',
          '--appendonly',
          'yes',
          '--appendfsync',
          'everysec',
          '--save',
          '',
        ],
        runDir: runDir(dir),
        logFile,
        cwd: dir,
      });
    }
    const deadline = Date.now() + (opts.timeoutS ?? 60) * 1000;
    for (const port of ports)
      await waitFor(
        async () => {
          if ((await probeRedis(host, port)) === 'ready') return true;
          const ours = readPidFile(runDir(dir), nodeName(port));
          if (ours && diedStarting(ours))
            throw new Error(`Redis Cluster node ${port} exited during start-up:\n${readClusterLogTail(dir, port)}`);
          return false;
        },
        deadline,
        port,
      );
    // A node that has never been part of a cluster knows only itself.
    const known = await clusterInfo(host, ports[0]);
    if (Number(known.cluster_known_nodes ?? '1') < 6) {
      say(`creating the Redis Cluster on ${nodes.join(' ')}`);
      const create = spawnSync(
        'redis-cli',
        ['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes'],
        { encoding: 'utf8', timeout: 60_000 },
      );
      if (create.status !== 0)
        throw new Error(`redis-cli --cluster create failed:\n${create.stderr || create.stdout}`.trim());
    }
    await waitFor(
      async () => {
        const infos = await Promise.all(
          ports.map((p) => clusterInfo(host, p).catch(() => ({}) as Record<string, string>)),
        );
        return infos.every((i) => i.cluster_state === 'ok' && i.cluster_known_nodes === '6');
      },
      deadline,
      'cluster_state:ok',
    );
    say(`Redis Cluster ready on ${nodes.join(',')}`);
  });
  return { nodes };
}

/** Stops the nodes started under `dir`; returns when every one of those processes has exited. */
export async function stopRedisCluster(dir: string, say: Say = () => undefined): Promise<void> {
  const names = listNodeNames(dir);
  await Promise.all(
    names.map(async (name) => {
      if (await stopStarted(runDir(dir), name)) say(`stopped ${name}`);
    }),
  );
}

export async function redisClusterStatus(dir: string, ports: number[], host = HOST): Promise<RedisClusterStatus> {
  const nodes = await Promise.all(
    ports.map(async (port): Promise<RedisClusterNode> => {
      const started = readPidFile(runDir(dir), nodeName(port));
      const pid = started && isRunning(started) ? started.pid : null;
      const state = await probeRedis(host, port);
      if (state !== 'ready') return { port, pid, state, role: 'unknown', slots: '' };
      const myself = (await command(host, port, ['CLUSTER', 'NODES']))
        .split('\n')
        .find((line) => line.includes('myself'));
      const fields = myself?.split(' ') ?? [];
      const role = fields[2]?.includes('master') ? 'master' : fields[2]?.includes('slave') ? 'slave' : 'unknown';
      return { port, pid, state, role, slots: fields.slice(8).join(' ') };
    }),
  );
  let state = 'down';
  for (const n of nodes) {
    if (n.state !== 'ready') continue;
    state = (await clusterInfo(host, n.port)).cluster_state ?? 'unknown';
    break;
  }
  return { state, nodes };
}

/** One line per node, for `status` commands. */
export function formatRedisClusterStatus(status: RedisClusterStatus): string[] {
  return [
    `Redis Cluster: ${status.state}`,
    ...status.nodes.map(
      (n) =>
        `  ${n.port} ${n.role.padEnd(7)} ${n.state}${n.pid ? ` pid ${n.pid}` : ' (not started here)'}${n.slots ? ` slots ${n.slots}` : ''}`,
    ),
  ];
}

function listNodeNames(dir: string): string[] {
  const run = runDir(dir);
  if (!existsSync(run)) return [];
  const names: string[] = [];
  for (const entry of readdirSync(run)) {
    const m = /^(redis-cluster-\d+)\.pid$/.exec(entry);
    if (m) names.push(m[1]);
  }
  return names;
}

async function waitFor(check: () => Promise<boolean>, deadline: number, what: string | number): Promise<void> {
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function clusterInfo(host: string, port: number): Promise<Record<string, string>> {
  const text = await command(host, port, ['CLUSTER', 'INFO']);
  return Object.fromEntries(
    text
      .split(/\r?\n/)
      .map((line) => line.split(':'))
      .filter((kv) => kv.length === 2),
  );
}

/** One command over RESP, bulk-string answer as text (no client library: this runs before the server's). */
function command(host: string, port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const chunks: Buffer[] = [];
    socket.setTimeout(3000, () => {
      socket.destroy();
      reject(new Error(`no answer from ${host}:${port}`));
    });
    socket.once('connect', () =>
      socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`),
    );
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const buf = Buffer.concat(chunks);
      const text = buf.toString('utf8');
      if (text.startsWith('-')) {
        socket.destroy();
        return reject(new Error(text.trim()));
      }
      const m = /^\$(\d+)\r\n/.exec(text);
      if (!m) return;
      const start = m[0].length;
      const len = Number(m[1]);
      if (buf.length >= start + len) {
        socket.destroy();
        resolve(buf.subarray(start, start + len).toString('utf8'));
      }
    });
    socket.once('error', reject);
  });
}

function readClusterLogTail(dir: string, port: number, lines = 20): string {
  try {
    return readFileSync(join(logDir(dir), `${nodeName(port)}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n');
  } catch {
    return '(no log)';
  }
}
