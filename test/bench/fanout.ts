// `npm run bench -- fanout [--followers=10000,100000] [--rounds=3]`: one status from an account
// with N active local followers, fanned out by real `pipeline fanout` processes (services/main.ts)
// reading the events from Kafka; measured from postStatus' return until every follower's home feed
// holds it. 10,000 followers with one process (target 2 s); 100,000 with one and with two,
// alternating for --rounds rounds on one data set (target 15 s, and the median with two faster
// than with one). Each size has its own database, Redis namespace and Kafka topics.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeTestCore } from '../support/core.ts';
import { loadConfig, type Config } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows, type FollowDoc } from '../../services/core/model/follows.ts';
import { feedKey } from '../../services/core/feeds/feeds.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { createTestUser } from '../support/fixtures.ts';
import { accountDoc } from './dataSet.ts';
import {
  cpuAccount,
  onTraceLines,
  pidsMatching,
  printTable,
  printTargets,
  startRole,
  stopRole,
  type Target,
} from './lib.ts';
import { markActive } from '../../services/core/feeds/activity.ts';
import { epochMs } from '../../services/core/streaming/latencyTrace.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const sizes = (option('followers') ?? '10000,100000').split(',').map(Number);
const rounds = Number(option('rounds') ?? 3);
const PARTITIONS = 4;

function scenarioConfig(): Config {
  const name = `bench_fanout_${randomBytes(4).toString('hex')}`;
  const url = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
  url.pathname = `/${name}`;
  return loadConfig({
    ...process.env,
    MONGO_URL: url.toString(),
    REDIS_NAMESPACE: name,
    KAFKA_TOPIC_PREFIX: name,
    KAFKA_PARTITIONS: String(PARTITIONS),
    LOG_LEVEL: 'warn',
  });
}

async function load(core: Core, n: number) {
  const star = await createTestUser(core);
  const base = 1_000;
  for (let from = 0; from < n; from += 5000) {
    const batch = Array.from({ length: Math.min(5000, n - from) }, (_, k) => ({
      ...accountDoc(base + from + k),
      domain: null,
    }));
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
  await collection(core.db, accounts).updateOne({ _id: star.account._id }, { $set: { followersCount: n } });
  const followerIds = Array.from({ length: n }, (_, i) => BigInt(base + i + 1));
  // Active users (a sign-up or API use marks them): the fan-out writes only their feeds.
  for (let i = 0; i < n; i += 10_000) await markActive(core, followerIds.slice(i, i + 10_000), 'ok');
  return { star, followerIds };
}

const POLL_BATCH = 2000;
/** The 1-based positions of the feeds (KEYS) that do not hold ARGV[1]: one command per batch. */
const MISSING_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  if not redis.call('ZSCORE', key, ARGV[1]) then out[#out + 1] = i end
end
return out
`;

/**
 * Of the feeds `keys`, those that may not hold the status yet: checked POLL_BATCH at a time, and
 * a poll stops at the first batch that still misses some (the rest stays unchecked). Every feed is
 * seen holding it before the list empties, but a poll costs little (checking all 100,000 feeds
 * ten times a second took more CPU, here and in Redis, than the fan-out it measured). Callers pass
 * the feeds newest follow first, the order the fan-out's ranges go in, so that by the end
 * little is left to check. One script call per batch: a pipeline of 2,000 ZSCOREs cost the benchmark
 * more CPU than the fan-out process it watched.
 */
async function stillMissing(core: Core, keys: string[], statusId: bigint): Promise<string[]> {
  for (let i = 0; i < keys.length; i += POLL_BATCH) {
    const batch = keys.slice(i, i + POLL_BATCH);
    const absent = (await core.redis.eval(MISSING_SCRIPT, batch.length, ...batch, String(statusId))) as number[];
    const missing = absent.map((k) => batch[k - 1]!);
    if (missing.length > 0) return [...missing, ...keys.slice(i + POLL_BATCH)];
  }
  return [];
}

/** `trace` lines (TRACE_STAGES) of the fan-out processes: every time of every stage, per status id. */
const traces = new Map<string, Map<string, number[]>>();
/** When the last trace line of each status arrived here (epoch ms). */
const lastTraceArrival = new Map<string, number>();
function readTraces(child: ChildProcess): void {
  onTraceLines(child, ({ id, stage, at }) => {
    let byStage = traces.get(id);
    if (!byStage) traces.set(id, (byStage = new Map()));
    let times = byStage.get(stage);
    if (!times) byStage.set(stage, (times = []));
    times.push(at);
    lastTraceArrival.set(id, epochMs());
  });
}

/** A fan-out whose processes have written no trace line for this long may be done: check it. */
const QUIET_MS = 300;

/** Where the time of one fan-out went, from its trace lines: seconds after `t0` (epoch ms). */
function stageSummary(id: string, t0: number): string {
  const byStage = traces.get(id);
  if (!byStage) return 'no trace';
  const at = (stage: string, pick: (xs: number[]) => number) => {
    const xs = byStage.get(stage);
    return xs ? ((pick(xs) - t0) / 1000).toFixed(2) : '-';
  };
  const starts = byStage.get('slice.start') ?? [];
  const dones = byStage.get('slice.done') ?? [];
  const busy = dones.reduce((sum, d, i) => sum + d - (starts[i] ?? d), 0) / 1000;
  // Mean time of each stage after the slice's start (each slice passes each stage once, except the
  // author's own feed write, which the first job adds).
  const meanAfterStart = (stage: string) => {
    const xs = byStage.get(stage) ?? [];
    if (xs.length === 0 || starts.length === 0) return '-';
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    return `${(mean(xs.slice(-starts.length)) - mean(starts)).toFixed(0)} ms`;
  };
  return (
    `per slice: queried ${meanAfterStart('fanout.queried')}, written ${meanAfterStart('fanout.written')}, ` +
    `done ${meanAfterStart('slice.done')}; ` +
    `consumed ${at('consumed', (x) => Math.min(...x))} s, ` +
    `first slices sent ${at('slices.sent', (x) => Math.min(...x))} s, first slice ${at('slice.start', (x) => Math.min(...x))} s, ` +
    `last slice done ${at('slice.done', (x) => Math.max(...x))} s; ${dones.length} slices, about ${busy.toFixed(1)} s of slice work; ` +
    `slices sent at ${(byStage.get('slices.sent') ?? []).map((x) => ((x - t0) / 1000).toFixed(2)).join(', ')} s`
  );
}

/** `processes` fan-out processes on the loaded data set: seconds from the post until every feed holds it. */
async function round(core: Core, config: Config, data: Loaded, processes: number): Promise<number> {
  const { star, followerIds } = data;
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      const child = await startRole(config, ['pipeline', 'fanout'], { TRACE_STAGES: '1' });
      readTraces(child);
      children.push(child);
    }
    // The consumers join their group after starting: a first status proves the pipeline is live.
    const warm = await postStatus(core, star.account, { text: 'warm-up' });
    const deadline = Date.now() + 120_000;
    while (!(await core.redis.zscore(feedKey('home', star.account._id), String(warm._id)))) {
      if (Date.now() > deadline) throw new Error('the fan-out pipeline never answered');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The measured fan-out starts from idle: the warm-up's slices must all be done first (they
    // would otherwise queue ahead of it on the same partitions).
    // Newest follows first (follow id = account id); the keys made once, not per poll.
    const inSliceOrder = [...followerIds].reverse().map((id) => feedKey('home', id));
    let warmMissing = inSliceOrder;
    while ((warmMissing = await stillMissing(core, warmMissing, warm._id)).length > 0) {
      if (Date.now() > deadline) throw new Error('the warm-up fan-out never finished');
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 500)); // and its last announcements
    const cpu = cpuAccount({
      'fan-out': children.map((c) => c.pid!),
      Redis: [Number(/process_id:(\d+)/.exec(await core.redis.info('server'))?.[1])],
      'MongoDB-wire': await pidsMatching('EmbeddedMongoServer'),
      Kafka: await pidsMatching('kafka.Kafka'),
      benchmark: [process.pid],
    });
    await cpu.start();
    const status = await postStatus(core, star.account, { text: `to ${followerIds.length} followers` });
    const t0 = epochMs();
    const id = String(status._id);
    // The time is that of the last feed write, as its fan-out process traced it when Redis had
    // answered the write ('fanout.written'); it counts once every feed is read and found holding
    // the status. Polling 100,000 feeds during the fan-out would time the benchmark's own reads
    // too: they cost Redis about a third of what the fan-out's writes do.
    let checkedAt: number;
    let used = '';
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      if (epochMs() - t0 > 300_000) throw new Error('fan-out did not finish in 300 s');
      if (!traces.get(id)?.get('fanout.written') || epochMs() - (lastTraceArrival.get(id) ?? 0) < QUIET_MS) continue;
      used ||= await cpu.stop((Math.max(...traces.get(id)!.get('fanout.written')!) - t0) / 1000);
      if ((await stillMissing(core, inSliceOrder, status._id)).length === 0) {
        checkedAt = epochMs();
        break;
      }
    }
    const seconds = (Math.max(...traces.get(id)!.get('fanout.written')!) - t0) / 1000;
    console.log(`    ${stageSummary(id, t0)}`);
    console.log(`    every feed read and found holding it ${((checkedAt - t0) / 1000).toFixed(2)} s after the post`);
    console.log(`    cpu: ${used}`);
    return seconds;
  } finally {
    // SIGTERM: the consumers leave their group, so the next round's join without waiting it out.
    for (const child of children) await stopRole(child, 15_000);
  }
}

type Loaded = Awaited<ReturnType<typeof load>>;

/**
 * One data set of `n` followers, then `rounds` rounds of each process count in turn (1, 2, 1, 2,
 * ...), so the two counts see the same machine load; their medians are compared.
 */
async function scenario(n: number, counts: number[]): Promise<Map<number, number[]>> {
  const config = scenarioConfig();
  const logger = createLogger('warn', 'bench');
  const core = await createCore(config, { sink: await createKafkaEventSink(config, logger) });
  const times = new Map<number, number[]>(counts.map((c) => [c, []]));
  try {
    const data = await load(core, n);
    for (let r = 0; r < (counts.length > 1 ? rounds : 1); r++) {
      for (const processes of counts) {
        const seconds = await round(core, config, data, processes);
        console.log(`  ${n} followers, ${processes} fan-out process(es), round ${r + 1}: ${seconds.toFixed(2)} s`);
        times.get(processes)!.push(seconds);
      }
    }
    return times;
  } finally {
    // The database, the Redis namespace and the Kafka topics: a broker left with every run's topics
    // starts slowly and answers metadata late.
    await closeTestCore(core).catch(() => undefined);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[][] = [];
const targets: Target[] = [];
const medians = new Map<number, number>();
for (const n of sizes) {
  const byCount = await scenario(n, n >= 100_000 ? [1, 2] : [1]);
  for (const [processes, times] of byCount) {
    const seconds = median(times);
    if (n >= 100_000) medians.set(processes, seconds);
    rows.push([String(n), String(processes), `${seconds.toFixed(2)} s`, times.map((t) => t.toFixed(2)).join(', ')]);
    const target = n >= 100_000 ? 15 : 2;
    targets.push({
      what: `fan-out to ${n} followers with ${processes} process${processes > 1 ? 'es' : ''} (median)`,
      measured: `${seconds.toFixed(2)} s`,
      target: `${target} s`,
      met: seconds <= target,
    });
  }
}
printTable(
  'fanout: time from the post until every follower feed holds the status',
  ['followers', 'processes', 'median', 'rounds'],
  rows,
);
const [one, two] = [medians.get(1), medians.get(2)];
if (one !== undefined && two !== undefined)
  targets.push({
    what: 'two processes faster than one (100,000 followers, medians)',
    measured: `${two.toFixed(2)} s vs ${one.toFixed(2)} s`,
    target: 'faster',
    met: two < one,
  });
printTargets('fanout', targets);
process.exit(0);
