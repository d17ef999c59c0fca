// Shared by the benchmarks: timing, percentiles, the result table and the target lines, and the
// server processes a benchmark runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../services/core/config.ts';
import type { StartedMessage } from '../../services/main.ts';

const root = join(import.meta.dirname, '..', '..');

/** A started role's process, with the ports it bound (null: it serves none). */
export interface RoleProcess extends ChildProcess {
  port: number | null;
  streamingPort: number | null;
}

/**
 * `node services/main.ts <role...>` on `config`'s servers, with `env` added (settings; ports only
 * where a benchmark needs fixed ones): it binds port 0 unless told otherwise, and resolves once it
 * reports that it started, with the ports it got. Logs at info, so callers can watch its stdout.
 */
export async function startRole(
  config: Config,
  role: string[],
  env: Record<string, string> = {},
  /** Node/V8 flags for the role (as `npm start` gives it). */
  nodeArgs: string[] = [],
): Promise<RoleProcess> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      // For a look inside, e.g. BENCH_ROLE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
      ...(process.env.BENCH_ROLE_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      join(root, 'services/main.ts'),
      ...role,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        MONGO_URL: config.mongoUrl,
        REDIS_URL: config.redisUrl,
        REDIS_CLUSTER_NODES: config.redisClusterNodes.join(','),
        REDIS_NAMESPACE: config.redisNamespace,
        KAFKA_BROKERS: config.kafkaBrokers.join(','),
        KAFKA_TOPIC_PREFIX: config.kafkaTopicPrefix,
        KAFKA_PARTITIONS: String(config.kafkaPartitions),
        LOG_LEVEL: 'info',
        PORT: '0',
        STREAMING_PORT: '0',
        ...env,
      },
      // The IPC channel carries the `started` message with the bound ports (services/main.ts).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  // Only the tail is kept: a benchmark's processes log for minutes.
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-50_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const started = await new Promise<StartedMessage>((resolve, reject) => {
    child.on('message', (m: StartedMessage) => {
      if (m.type === 'started') resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`${role.join(' ')} exited with ${code}:\n${output.slice(-4000)}`)));
  });
  // The channel must not keep this process waiting for the child.
  child.channel?.unref();
  return Object.assign(child, { port: started.port, streamingPort: started.streamingPort });
}

/** A stage time a process logged with TRACE_STAGES=1 (`trace {"id","stage","at"}` lines on stdout). */
export interface StageTrace {
  id: string;
  stage: string;
  at: number;
}

/**
 * Calls `onTrace` for every trace line `child` prints, and `onOther` for each of its other lines. A
 * trace line another write split in the middle (a process's log shares its stdout) is skipped.
 */
export function onTraceLines(
  child: ChildProcess,
  onTrace: (t: StageTrace) => void,
  onOther?: (line: string) => void,
): void {
  let buffered = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('trace ')) {
        onOther?.(line);
        continue;
      }
      let trace: StageTrace;
      try {
        trace = JSON.parse(line.slice(6)) as StageTrace;
      } catch {
        continue;
      }
      onTrace(trace);
    }
  });
}

export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function stats(samplesMs: number[]): Stats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

/** Runs `op` `warmup` times unmeasured, then `n` times one after the other; milliseconds per call. */
export async function timeEach(
  n: number,
  op: (i: number) => Promise<unknown>,
  warmup = Math.ceil(n / 10),
): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await op(i);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await op(i + warmup);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return stats(samples);
}

export function ms(value: number): string {
  return Number.isFinite(value) ? (value < 10 ? value.toFixed(2) : value.toFixed(1)) : '-';
}

/** Prints rows as a Markdown table (the README keeps the latest one). */
export function printTable(title: string, header: string[], rows: string[][]): void {
  console.log(`\n${title}\n`);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const row of rows) console.log(line(row));
}

export interface Target {
  what: string;
  measured: string;
  target: string;
  met: boolean;
}

/** One line per target, as `npm run bench` promises: `NAME: measured (target T) met|missed`. */
export function printTargets(name: string, targets: Target[]): void {
  console.log('');
  for (const t of targets)
    console.log(`${name}: ${t.what} ${t.measured} (target ${t.target}) ${t.met ? 'met' : 'missed'}`);
}

export function random(seed: number): () => number {
  // mulberry32: a small deterministic generator, so every run loads the same data set
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Stops a server process the benchmark started: SIGTERM, and SIGKILL if it has not exited after
 * `graceMs` (0: SIGKILL at once).
 */
export async function stopRole(child: ChildProcess | null, graceMs = 0): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const killer = graceMs > 0 ? setTimeout(() => child.kill('SIGKILL'), graceMs) : undefined;
  await exited;
  clearTimeout(killer);
}

/** CPU seconds of a process so far (Linux /proc; 10 ms resolution), 0 if it is gone. */
export async function processCpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Busy and total CPU seconds of the whole machine so far (all cores, /proc/stat). */
async function machineCpuSeconds(): Promise<{ busy: number; total: number }> {
  const [user, nice, system, idle, iowait, ...rest] = (await readFile('/proc/stat', 'utf8'))
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = [user, nice, system, idle, iowait, ...rest.slice(0, 3)].reduce((a, b) => a! + b!, 0)!;
  return { busy: (total - idle! - iowait!) / 100, total: total / 100 };
}

/**
 * Where the machine's CPU went between `start()` and `stop()`: CPU seconds of each named group of
 * processes, the rest of the machine, and how many cores were busy on average. For saying what
 * limits a benchmark, not for targets (10 ms resolution).
 */
export function cpuAccount(groups: Record<string, number[]>) {
  const read = async () => ({
    machine: await machineCpuSeconds(),
    groups: Object.fromEntries(
      await Promise.all(
        Object.entries(groups).map(
          async ([name, pids]) =>
            [name, (await Promise.all(pids.map(processCpuSeconds))).reduce((a, b) => a + b, 0)] as const,
        ),
      ),
    ),
    at: performance.now(),
  });
  let before: Awaited<ReturnType<typeof read>> | null = null;
  return {
    async start() {
      before = await read();
    },
    /**
     * e.g. "1.7 of 2 cores busy; CPU-s: fan-out 0.91, Redis 0.80, rest of the machine 0.42". Cores
     * busy are counted over `activeSeconds` when given (the measured part of the window).
     */
    async stop(activeSeconds?: number): Promise<string> {
      const after = await read();
      const b = before!;
      const seconds = activeSeconds ?? (after.at - b.at) / 1000;
      const busy = after.machine.busy - b.machine.busy;
      const cores = (after.machine.total - b.machine.total) / ((after.at - b.at) / 1000);
      const parts = Object.keys(groups).map((name) => {
        const used = after.groups[name]! - b.groups[name]!;
        return `${name} ${used.toFixed(2)}`;
      });
      const named = Object.keys(groups).reduce((sum, n) => sum + after.groups[n]! - b.groups[n]!, 0);
      return (
        `${(busy / seconds).toFixed(1)} of ${cores.toFixed(0)} cores busy; CPU-s: ${parts.join(', ')}, ` +
        `rest of the machine ${(busy - named).toFixed(2)}`
      );
    },
  };
}

/** Processes whose command line contains `text` (Linux /proc), e.g. the local Kafka broker. */
export async function pidsMatching(text: string): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) out.push(Number(entry));
  }
  return out;
}

/**
 * The process listening on a TCP port of this machine (Linux /proc), e.g. the shared Kafka broker
 * (other processes may match its command line: other people's clusters on a shared machine).
 */
export async function pidListening(port: number): Promise<number | null> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // LISTEN
      if (parseInt(f[1]!.split(':')[1]!, 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1]!)) return Number(entry);
    }
  }
  return null;
}

/** A stop-the-world pause of one runtime, at a wall-clock time (ms since the epoch). */
export interface Pause {
  atMs: number;
  ms: number;
  /** The collection, e.g. `Full`, `Young`, `mark-compact`, `scavenge`. */
  kind: string;
}

/**
 * The collection pauses a JVM logged (`-Xlog:gc:file=FILE:time`) between two wall-clock times:
 * every request waiting on that JVM waits through them. null when there is no such log (not "no
 * pauses").
 */
export async function jvmPauseList(file: string, fromMs: number, toMs: number): Promise<Pause[] | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  const out: Pause[] = [];
  for (const line of text.split('\n')) {
    // [2026-11-29T09:09:05.250+0000] GC(2) Pause Full (Allocation Failure) 5M->5M(31M) 9.035ms
    const m = /^\[(\S+?)([+-]\d\d)(\d\d)\] GC\(\d+\) Pause (\w+).* ([\d.]+)ms$/.exec(line);
    if (!m) continue;
    const at = Date.parse(`${m[1]}${m[2]}:${m[3]}`);
    if (at >= fromMs && at <= toMs) out.push({ atMs: at, ms: Number(m[5]), kind: m[4]! });
  }
  return out;
}

/**
 * The main-thread pauses a Node process logged through nodeGcLog.ts; null without a log. An
 * event-loop stall counts only for what its collections do not explain (a collection inside it
 * is a pause of its own).
 */
export async function nodePauseList(file: string, fromMs: number, toMs: number): Promise<Pause[] | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  const all = text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => f.length === 3)
    .map(([at, pause, kind]) => ({ atMs: Number(at), ms: Number(pause), kind: kind! }))
    .filter((p) => p.atMs >= fromMs && p.atMs <= toMs);
  const collections = all.filter((p) => p.kind !== 'event-loop');
  const stalls = all
    .filter((p) => p.kind === 'event-loop')
    .map((p) => {
      const collected = collections
        .filter((c) => c.atMs < p.atMs + p.ms && c.atMs + c.ms > p.atMs)
        .reduce((sum, c) => sum + c.ms, 0);
      return { ...p, ms: p.ms - collected };
    })
    .filter((p) => p.ms >= 1);
  return [...collections, ...stalls];
}

export interface PauseSummary {
  count: number;
  totalMs: number;
  /** The full collections' pauses, ms. */
  full: number[];
}

/** A JVM's pauses summed up: how often, how long in all, and the full collections. */
export function summarisePauses(list: readonly Pause[]): PauseSummary {
  return {
    count: list.length,
    totalMs: list.reduce((sum, p) => sum + p.ms, 0),
    full: list.filter((p) => p.kind === 'Full').map((p) => p.ms),
  };
}

/** A request's wall-clock window (ms since the epoch). */
export interface Timed {
  startMs: number;
  endMs: number;
}

export interface SlowBursts {
  /** Requests slower than the threshold. */
  slow: number;
  /** Groups of them in flight together (overlapping windows). */
  bursts: number;
  /** Per cause (`<runtime> <collection>`, or `none`): the bursts whose longest pause was it, and their requests. */
  byCause: Map<string, { bursts: number; requests: number }>;
  /**
   * The share of windows as long as the bursts, laid at 50 even places over the requests' span,
   * that hold a pause too: how often a pause would be found in a burst by chance.
   */
  byChance: number;
}

/**
 * Where a slow tail comes from: the requests slower than `overMs`, grouped into bursts of requests
 * in flight together, each burst put down to the longest pause of any runtime (`pauses`, by
 * name) that fell inside its window, or to `none` when no pause of at least `minPauseMs` did.
 */
export function slowBursts(
  requests: readonly Timed[],
  overMs: number,
  pauses: Record<string, readonly Pause[]>,
  minPauseMs = 5,
): SlowBursts {
  const slow = requests.filter((r) => r.endMs - r.startMs > overMs).sort((a, b) => a.startMs - b.startMs);
  const groups: Array<{ from: number; to: number; requests: number }> = [];
  for (const r of slow) {
    const last = groups.at(-1);
    if (last && r.startMs <= last.to) {
      last.to = Math.max(last.to, r.endMs);
      last.requests++;
    } else groups.push({ from: r.startMs, to: r.endMs, requests: 1 });
  }
  const all = Object.entries(pauses)
    .flatMap(([runtime, list]) => list.map((p) => ({ ...p, runtime })))
    .filter((p) => p.ms >= minPauseMs);
  const within = (from: number, to: number) => all.filter((p) => p.atMs + p.ms >= from && p.atMs <= to);
  const byCause = new Map<string, { bursts: number; requests: number }>();
  for (const g of groups) {
    const inside = within(g.from, g.to);
    const longest = inside.sort((a, b) => b.ms - a.ms)[0];
    const cause = longest ? `${longest.runtime} ${longest.kind}` : 'none';
    const c = byCause.get(cause) ?? { bursts: 0, requests: 0 };
    c.bursts++;
    c.requests += g.requests;
    byCause.set(cause, c);
  }
  const spanFrom = Math.min(...requests.map((r) => r.startMs));
  const spanTo = Math.max(...requests.map((r) => r.endMs));
  let tried = 0;
  let found = 0;
  for (const g of groups) {
    const length = g.to - g.from;
    for (let k = 0; k < 50; k++) {
      const from = spanFrom + ((spanTo - spanFrom - length) * k) / 49;
      tried++;
      if (within(from, from + length).length > 0) found++;
    }
  }
  return { slow: slow.length, bursts: groups.length, byCause, byChance: tried === 0 ? 0 : found / tried };
}

/**
 * A SlowBursts's causes, most slow requests first: "<runtime> <kind> <bursts> (<n> <unit>)", or
 * "no pause of <minPauseMs> ms or more …" for bursts with no pause inside.
 */
export function describeBurstCauses(tail: SlowBursts, minPauseMs: number, unit: string): string {
  return (
    [...tail.byCause.entries()]
      .sort((a, b) => b[1].requests - a[1].requests)
      .map(
        ([cause, c]) =>
          `${cause === 'none' ? `no pause of ${minPauseMs} ms or more` : cause} ${c.bursts} (${c.requests} ${unit})`,
      )
      .join(', ') || '-'
  );
}

/**
 * The machine's speed, measured: a fixed workload of the kinds the server spends its CPU on (JSON,
 * SHA-256, Map lookups by bigint, string building), timed by its own thread's CPU time in a worker
 * thread (the benchmark's own thread is left alone), before and after each benchmark. The same code
 * measured 30-50 % apart on this shared machine on different days; the reference says how much of
 * that was the machine. In ms of CPU per 40,000 rounds (lower is faster). Sampling it during a phase
 * (short chunks every 250-600 ms) read 400-730 ms on an idle machine: too noisy to use.
 */
const REFERENCE_WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const status = {
  id: '115000000000000001',
  created_at: '2026-11-29T12:00:00.000Z',
  content: '<p>' + 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8) + '</p>',
  tags: [{ name: 'bench', url: 'https://example.test/tags/bench' }],
  account: { id: '1', username: 'alice', note: '<p>note</p>', followers_count: 50 },
};
const map = new Map();
for (let i = 0n; i < 20000n; i++) map.set(115000000000000000n + i * 7n, Number(i));
let sink = 0;
function rounds(n) {
  for (let i = 0; i < n; i++) {
    const text = JSON.stringify({ ...status, id: String(i) });
    sink += JSON.parse(text).content.length;
    sink += createHash('sha256').update(text).digest()[0];
    for (let k = 0; k < 20; k++) sink += map.get(115000000000000000n + BigInt((i * 20 + k) % 20000) * 7n) ?? 0;
    sink += [text.slice(0, 40), String(i), text.slice(-40)].join('').length;
  }
}
// CPU ms of 40,000 rounds.
function timed() {
  const before = process.threadCpuUsage();
  rounds(40000);
  const used = process.threadCpuUsage(before);
  return (used.user + used.system) / 1000;
}
timed(); // the optimising compiler's turn
parentPort.postMessage(Array.from({ length: 5 }, timed));
if (sink < 0) throw new Error('unreachable');
`;

/** The reference on a machine otherwise as it is now: the median of five 40,000-round runs. */
export async function machineReference(): Promise<number> {
  const worker = new Worker(REFERENCE_WORKER, { eval: true });
  try {
    const [runs] = (await once(worker, 'message')) as [number[]];
    return stats(runs).p50;
  } finally {
    await worker.terminate();
  }
}

/** The reference as the benchmarks print it around each benchmark. */
export async function printMachineReference(when: string): Promise<void> {
  console.log(
    `machine reference ${when}: ${(await machineReference()).toFixed(0)} ms (a fixed workload's CPU time; lower is faster)`,
  );
}
