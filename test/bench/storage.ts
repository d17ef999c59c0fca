// `npm run bench -- storage [--scale=full|medium|small] [--candidates=embedded,ferretdb,url]`
//
// Loads an instance's data set through the project's own model code (collections and indexes of
// services/core/model, documents of their shapes) into each candidate MongoDB-wire server, then
// measures the reads the API makes on its hot paths, concurrent $inc and kill -9 durability.
// Candidates: `embedded` (deploy/local's server, started here on its own port and file), `ferretdb`
// (FerretDB 1.x on SQLite, the previous default; it scans, so it gets the small data set), `url`
// (any server named by MONGO_BENCH_URL, e.g. a real mongod; no kill -9 there).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import type { Id } from '../../services/core/ids.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { favourites, type FavouriteDoc } from '../../services/core/model/favourites.ts';
import { follows, type FollowDoc } from '../../services/core/model/follows.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { statusContext } from '../../services/core/statuses/context.ts';
import { ensureFerretdb, ferretdbBinary } from '../../deploy/local/install.ts';
import { localInfraSettings } from '../../deploy/local/infra.ts';
import { probeMongo } from '../../deploy/local/probes.ts';
import { ms, printTable, printTargets, random, timeEach, type Stats, type Target } from './lib.ts';
import { accountDoc, statusDoc, statusId, T0 } from './dataSet.ts';
import { ownMongoServer } from '../support/mongoServer.ts';
import { unusedPort } from '../support/processes.ts';

const root = join(import.meta.dirname, '..', '..');
const benchDir = join(root, 'var', 'bench', 'storage');

const SCALES = {
  full: { accounts: 100_000, statuses: 1_000_000, follows: 1_000_000, favourites: 1_000_000 },
  medium: { accounts: 20_000, statuses: 200_000, follows: 200_000, favourites: 200_000 },
  small: { accounts: 2_000, statuses: 20_000, follows: 20_000, favourites: 20_000 },
} as const;
type Scale = keyof typeof SCALES;

const option = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const scaleOption = option('scale') ?? 'full';
if (!(scaleOption in SCALES)) throw new Error(`--scale is one of ${Object.keys(SCALES).join(', ')}`);
const scale = scaleOption as Scale;
const candidates = (option('candidates') ?? 'embedded,ferretdb').split(',').filter(Boolean);

interface Server {
  url: string;
  /** CPU seconds the server process has used so far; null for outside servers. */
  cpuSeconds(): number | null;
  /** Kills the server with SIGKILL and starts it again on the same data; null for outside servers. */
  killAndRestart: (() => Promise<number>) | null;
  rssMb(): number | null;
  dataBytes(): number | null;
  stop(): Promise<void>;
}

async function waitReady(port: number, child: ChildProcess, label: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}`);
    if ((await probeMongo('127.0.0.1', port)) === 'ready') return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${label} not ready after 180 s`);
}

function rssMb(pid: number | undefined): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** A server process of ours, to start, kill (SIGKILL) and start again on the same port and data. */
interface OwnProcess {
  readonly port: number;
  readonly pid: number | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** FerretDB on a port chosen first (`unusedPort`): its `--listen-addr` takes a port, it reports none. */
function spawned(label: string, command: () => { command: string; args: string[] }, port: number): OwnProcess {
  let child: ChildProcess | null = null;
  return {
    port,
    get pid() {
      return child?.pid;
    },
    async start() {
      const { command: cmd, args } = command();
      child = spawn(cmd, args, { stdio: 'ignore' });
      await waitReady(port, child, label);
    },
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGKILL');
      await exited;
    },
  };
}

/** A server process of ours as a candidate: started, killed with SIGKILL and restarted on the same data. */
async function ownServer(server: OwnProcess, dataPath: string): Promise<Server> {
  const start = async () => {
    const t0 = Date.now();
    await server.start();
    return Date.now() - t0;
  };
  await start();
  return {
    url: `mongodb://127.0.0.1:${server.port}/bench`,
    cpuSeconds: () => cpuSeconds(server.pid),
    killAndRestart: async () => {
      await server.stop();
      return start();
    },
    rssMb: () => rssMb(server.pid),
    dataBytes: () => du(dataPath),
    stop: () => server.stop(),
  };
}

function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return null;
  }
}

/**
 * After a bulk load the store's background writer compacts for a while; reads are measured in the
 * steady state after it, and how long it took is reported.
 */
async function settle(server: Server): Promise<number> {
  const t0 = Date.now();
  let quiet = 0;
  let last = server.cpuSeconds();
  while (last !== null && quiet < 3 && Date.now() - t0 < 180_000) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = server.cpuSeconds();
    if (now === null) break;
    quiet = now - last < 0.05 ? quiet + 1 : 0;
    last = now;
  }
  return Date.now() - t0;
}

function du(path: string): number | null {
  try {
    const st = statSync(path);
    if (st.isFile()) return st.size;
    let total = 0;
    for (const entry of readdirSync(path)) total += du(join(path, entry)) ?? 0;
    return total;
  } catch {
    return null;
  }
}

async function startCandidate(name: string): Promise<Server> {
  const dir = join(benchDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (name === 'embedded') {
    // It binds port 0 and reports the port it got; a restart binds that one again.
    return ownServer(ownMongoServer(dir), join(dir, 'mongo', 'data.mv'));
  }
  if (name === 'ferretdb') {
    const port = await unusedPort();
    const settings = localInfraSettings(root);
    ensureFerretdb(settings, (m) => console.log(m));
    mkdirSync(join(dir, 'data'), { recursive: true });
    const args = [
      '--handler=sqlite',
      `--sqlite-url=file:${join(dir, 'data')}/`,
      `--listen-addr=127.0.0.1:${port}`,
      `--state-dir=${dir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=warn',
    ];
    return ownServer(
      spawned('FerretDB', () => ({ command: ferretdbBinary(settings), args }), port),
      join(dir, 'data'),
    );
  }
  if (name === 'url') {
    const url = process.env.MONGO_BENCH_URL;
    if (!url) throw new Error('candidate "url" needs MONGO_BENCH_URL');
    const u = new URL(url);
    u.pathname = '/fedisrv_storage_bench';
    return {
      url: u.toString(),
      cpuSeconds: () => null,
      killAndRestart: null,
      rssMb: () => null,
      dataBytes: () => null,
      stop: async () => {},
    };
  }
  throw new Error(`unknown candidate ${name}`);
}

function coreFor(url: string): Promise<Core> {
  const config = loadConfig({
    ...process.env,
    MONGO_URL: url,
    REDIS_NAMESPACE: `bench_storage_${process.pid}`,
    KAFKA_TOPIC_PREFIX: `bench_storage_${process.pid}`,
  });
  return createCore(config, {
    sink: {
      publish: () => Promise.reject(new Error('the storage benchmark publishes no events')),
    },
  });
}

// ---- the data set ----

/** Skewed like a real instance: a few accounts write most statuses. */
const authorOf = (r: () => number, n: number) => Math.min(n - 1, Math.floor(n * r() ** 3));

const THREAD_REPLIES = 50;

async function insertAll<T extends { _id: Id }>(
  label: string,
  n: number,
  make: (i: number) => T,
  insert: (docs: T[]) => Promise<unknown>,
): Promise<number> {
  const t0 = Date.now();
  const batch = 1000;
  let next = 0;
  // Two writers: one per core of the machine this is built for.
  const writer = async () => {
    while (next < n) {
      const from = next;
      next = Math.min(n, next + batch);
      const docs: T[] = [];
      for (let i = from; i < next; i++) docs.push(make(i));
      await insert(docs);
    }
  };
  await Promise.all([writer(), writer()]);
  const seconds = (Date.now() - t0) / 1000;
  console.log(`  loaded ${n} ${label} in ${seconds.toFixed(1)} s (${Math.round(n / seconds)}/s)`);
  return seconds;
}

async function load(core: Core, size: (typeof SCALES)[Scale]): Promise<{ threadRoot: Id; loadSeconds: number }> {
  const r = random(42);
  let seconds = 0;
  seconds += await insertAll('accounts', size.accounts, accountDoc, (docs) =>
    collection(core.db, accounts).insertMany(docs, { ordered: false }),
  );
  const authors = Array.from({ length: size.statuses }, () => authorOf(r, size.accounts));
  seconds += await insertAll(
    'statuses',
    size.statuses,
    (i) => statusDoc(i, authors[i] ?? 0, null),
    (docs) => collection(core.db, statuses).insertMany(docs, { ordered: false }),
  );
  // A thread of 50 replies under one root: 10 direct replies, the rest answering earlier replies.
  const rootIndex = Math.floor(size.statuses / 2);
  const threadIds: { id: Id; accountId: Id }[] = [
    { id: statusId(rootIndex), accountId: BigInt((authors[rootIndex] ?? 0) + 1) },
  ];
  const replies: StatusDoc[] = [];
  for (let k = 0; k < THREAD_REPLIES; k++) {
    const parent = threadIds[k < 10 ? 0 : 1 + Math.floor(r() * (threadIds.length - 1))] ?? threadIds[0];
    const doc = statusDoc(size.statuses + k, Math.floor(r() * size.accounts), parent ?? null);
    replies.push(doc);
    threadIds.push({ id: doc._id, accountId: doc.accountId });
  }
  await collection(core.db, statuses).insertMany(replies);
  const pair = (i: number) => {
    const a = Math.floor(i / 10);
    return { a: BigInt((a % size.accounts) + 1), b: BigInt(((a * 7919 + (i % 10) * 104729) % size.accounts) + 1) };
  };
  seconds += await insertAll(
    'follows',
    size.follows,
    (i): FollowDoc => {
      const { a, b } = pair(i);
      return {
        _id: BigInt(i + 1),
        accountId: a,
        targetAccountId: b === a ? (b % BigInt(size.accounts)) + 1n : b,
        showReblogs: true,
        notify: false,
        languages: null,
        uri: null,
        createdAt: new Date(T0),
      };
    },
    (docs) => collection(core.db, follows).insertMany(docs, { ordered: false }).catch(ignoreDuplicates),
  );
  seconds += await insertAll(
    'favourites',
    size.favourites,
    (i): FavouriteDoc => ({
      _id: BigInt(i + 1),
      accountId: BigInt((Math.floor(i / 10) % size.accounts) + 1),
      statusId: statusId((i * 7919) % size.statuses),
      createdAt: new Date(T0),
    }),
    (docs) => collection(core.db, favourites).insertMany(docs, { ordered: false }).catch(ignoreDuplicates),
  );
  return { threadRoot: statusId(rootIndex), loadSeconds: seconds };
}

function ignoreDuplicates(err: unknown): void {
  if ((err as { code?: number }).code !== 11000) throw err;
}

// ---- the measurements ----

interface Measured {
  name: string;
  scale: Scale;
  loadSeconds: number;
  settleMs: number;
  rows: { what: string; stats: Stats | null; note?: string; target?: number }[];
  incLost: number;
  incFailed: number;
  killSurvived: boolean | null;
  restartMs: number | null;
  throughput: number;
  rssMb: number | null;
  dataMb: number | null;
}

async function measure(name: string): Promise<Measured> {
  const candidateScale: Scale = name === 'ferretdb' ? 'small' : scale;
  const size = SCALES[candidateScale];
  console.log(`\n${name}: loading the ${candidateScale} data set`);
  const server = await startCandidate(name);
  let core = await coreFor(server.url);
  try {
    await core.db.dropDatabase();
    core = await reopen(core, server.url);
    const { threadRoot, loadSeconds } = await load(core, size);
    const settleMs = await settle(server);
    console.log(`  housekeeping after the load: ${(settleMs / 1000).toFixed(0)} s`);
    const r = random(7);
    const anyStatus = () => statusId(Math.floor(r() * size.statuses));
    const anyAccount = () => BigInt(Math.floor(r() * size.accounts) + 1);
    const heavyAccount = () => BigInt(Math.floor(size.accounts * r() ** 3) + 1);
    const st = collection(core.db, statuses);
    const n = name === 'ferretdb' ? 5 : 2000; // FerretDB scans: a few calls take minutes
    console.log(`  measuring (${n} calls each)`);
    const rows: Measured['rows'] = [];
    rows.push({ what: 'status by id', stats: await timeEach(n, () => st.findOne({ _id: anyStatus() })), target: 2 });
    rows.push({
      what: 'account by id',
      stats: await timeEach(n, () => collection(core.db, accounts).findOne({ _id: anyAccount() })),
      target: 2,
    });
    rows.push({
      what: "page of 20 of an account's statuses",
      stats: await timeEach(n, () =>
        st.find({ accountId: heavyAccount(), deletedAt: null }).sort({ _id: -1 }).limit(20).toArray(),
      ),
      target: 10,
    });
    const root = await st.findOne({ _id: threadRoot });
    if (!root) throw new Error('thread root missing');
    rows.push({
      what: 'context of a 50-reply thread',
      stats: await timeEach(Math.min(n, 500), async () => {
        const { descendants } = await statusContext(core, null, root);
        if (descendants.length !== THREAD_REPLIES) throw new Error(`thread has ${descendants.length} replies`);
      }),
      target: 20,
    });
    rows.push({
      what: 'batch of 20 statuses by id',
      stats: await timeEach(n, () => st.find({ _id: { $in: Array.from({ length: 20 }, anyStatus) } }).toArray()),
      target: 5,
    });
    rows.push({
      what: 'is following (count, limit 1)',
      stats: await timeEach(n, () =>
        collection(core.db, follows).countDocuments(
          { accountId: anyAccount(), targetAccountId: anyAccount() },
          { limit: 1 },
        ),
      ),
    });
    rows.push({
      what: "page of 40 of an account's followers",
      stats: await timeEach(n, () =>
        collection(core.db, follows).find({ targetAccountId: anyAccount() }).sort({ _id: -1 }).limit(40).toArray(),
      ),
    });

    // 16 concurrent readers by id, as in the report that opened this issue.
    const seconds = candidateScale === 'small' && name === 'ferretdb' ? 5 : 3;
    let done = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          await st.findOne({ _id: anyStatus() });
          done++;
        }
      }),
    );
    const throughput = done / seconds;

    // 500 concurrent $inc on one document.
    const target = statusId(1);
    const before = (await st.findOne({ _id: target }))?.favouritesCount ?? 0;
    const incs = await Promise.allSettled(
      Array.from({ length: 500 }, () => st.updateOne({ _id: target }, { $inc: { favouritesCount: 1 } })),
    );
    const incFailed = incs.filter((r) => r.status === 'rejected').length;
    const after = (await st.findOne({ _id: target }))?.favouritesCount ?? 0;
    // Lost: acknowledged increments that are not in the document.
    const incLost = 500 - incFailed - (after - before);

    // An acknowledged write, then kill -9 of the server, then a restart on the same data.
    let killSurvived: boolean | null = null;
    let restartMs: number | null = null;
    const rss = server.rssMb();
    if (server.killAndRestart) {
      const marker = statusDoc(size.statuses + THREAD_REPLIES + 1, 0, null);
      await st.insertOne(marker);
      await core.close();
      restartMs = await server.killAndRestart();
      core = await coreFor(server.url);
      killSurvived = (await collection(core.db, statuses).findOne({ _id: marker._id })) !== null;
    }
    const data = server.dataBytes();
    return {
      name,
      scale: candidateScale,
      loadSeconds,
      settleMs,
      rows,
      incLost,
      incFailed,
      killSurvived,
      restartMs,
      throughput,
      rssMb: rss,
      dataMb: data === null ? null : Math.round(data / 1048576),
    };
  } finally {
    await core.db.dropDatabase().catch(() => undefined);
    await core.close();
    await server.stop();
  }
}

async function reopen(core: Core, url: string): Promise<Core> {
  await core.close();
  return coreFor(url);
}

function report(m: Measured, targets: Target[]): void {
  const size = SCALES[m.scale];
  printTable(
    `${m.name} (${m.scale}: ${size.statuses} statuses, ${size.accounts} accounts, ${size.follows} follows, ${size.favourites} favourites; loaded in ${m.loadSeconds.toFixed(0)} s, then ${(m.settleMs / 1000).toFixed(0)} s of store housekeeping)`,
    ['operation', 'p50 ms', 'p99 ms', 'max ms', 'target'],
    [
      ...m.rows.map((row) => [
        row.what,
        ms(row.stats?.p50 ?? NaN),
        ms(row.stats?.p99 ?? NaN),
        ms(row.stats?.max ?? NaN),
        row.target ? `p99 ≤ ${row.target} ms` : '',
      ]),
      ['16 concurrent readers by id', `${Math.round(m.throughput)} req/s`, '', '', ''],
      [
        '500 concurrent $inc on one document',
        `${m.incLost} lost`,
        m.incFailed ? `${m.incFailed} refused with errors` : '',
        '',
        'none lost',
      ],
      [
        'acknowledged write, kill -9, restart',
        m.killSurvived === null ? 'not our process' : m.killSurvived ? 'survived' : 'LOST',
        m.restartMs === null ? '' : `restart ${m.restartMs} ms`,
        '',
        'survives',
      ],
      ['server memory (RSS) / data on disk', `${m.rssMb ?? '-'} MB`, `${m.dataMb ?? '-'} MB`, '', ''],
    ],
  );
  const full = m.scale === 'full';
  for (const row of m.rows) {
    if (!row.target || !row.stats) continue;
    targets.push({
      what: `${m.name}${full ? '' : ` (${m.scale} data set)`} ${row.what} p99`,
      measured: `${ms(row.stats.p99)} ms`,
      target: `${row.target} ms`,
      met: full && row.stats.p99 <= row.target,
    });
  }
  targets.push({
    what: `${m.name} 500 concurrent $inc lost`,
    measured: m.incFailed ? `${m.incLost} (and ${m.incFailed} refused)` : String(m.incLost),
    target: '0',
    met: m.incLost === 0 && m.incFailed === 0,
  });
  if (m.killSurvived !== null) {
    targets.push({
      what: `${m.name} acknowledged write after kill -9`,
      measured: m.killSurvived ? 'survived' : 'lost',
      target: 'survives',
      met: m.killSurvived,
    });
  }
}

const targets: Target[] = [];
for (const name of candidates) {
  try {
    report(await measure(name), targets);
  } catch (err) {
    console.log(`${name}: not measured: ${err instanceof Error ? err.message : String(err)}`);
  }
}
printTargets('storage', targets);
process.exit(0);
