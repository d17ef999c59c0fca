// `npm run bench -- graph`: 100,000 follows of one account (bulk-inserted through the model code),
// then over real HTTP: pages of its followers and relationships with 40 accounts. Target:
// relationships for 40 ids p99 ≤ 10 ms. Uses the local servers (MONGO_URL etc.), its own database.
// What limits the tail is printed too: each relationships request over 10 ms beside the longest
// collection pause inside it, of this process (server and client) and of the MongoDB-wire JVM
// (its collector's log switched on for the phase with jcmd).
import { closeTestCore } from '../support/core.ts';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows, type FollowDoc } from '../../services/core/model/follows.ts';
import { createTestUser, startTestServer } from '../support/fixtures.ts';
import { accountDoc } from './dataSet.ts';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeBurstCauses,
  jvmPauseList,
  ms,
  nodePauseList,
  pidListening,
  printTable,
  printTargets,
  slowBursts,
  summarisePauses,
  timeEach,
  type Timed,
} from './lib.ts';
import { logPauses } from './nodeGcLog.ts';

const FOLLOWERS = 100_000;
const TARGET_MS = 10;
/** A pause shorter than this is not named as a slow request's cause. */
const SIGNIFICANT_PAUSE_MS = 3;
/** The data set's account ids start above the two users made through the model code. */
const OFFSET = 100;
const name = `bench_graph_${randomBytes(4).toString('hex')}`;
const url = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
url.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: url.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
});
const core = await createCore(config, {
  // The fixtures' sign-up events go nowhere: no consumer runs here.
  sink: { publish: async () => undefined },
});
const server = await startTestServer(core);
const logs = mkdtempSync(join(tmpdir(), 'bench-graph-'));
const ownPauses = join(logs, 'node-gc.log');
const jvmLog = join(logs, 'mongo-gc.log');
logPauses(ownPauses);
const mongoPid = await pidListening(Number(url.port || 27017));

/** Switches the MongoDB-wire JVM's collector log to `jvmLog` on or off; false when it cannot. */
function mongoGcLog(on: boolean): boolean {
  if (mongoPid === null) return false;
  try {
    execFileSync(
      'jcmd',
      [String(mongoPid), 'VM.log', `output=file=${jvmLog}`, `what=gc${on ? '' : '=off'}`, 'decorators=time'],
      {
        stdio: 'ignore',
      },
    );
    return true;
  } catch {
    return false;
  }
}

try {
  const star = await createTestUser(core);
  const viewer = await createTestUser(core);
  // Accounts 1..N (the data set's ids) follow the star; the viewer follows every tenth of them.
  const t0 = Date.now();
  for (let from = 0; from < FOLLOWERS; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, FOLLOWERS - from) }, (_, k) => accountDoc(OFFSET + from + k));
    await collection(core.db, accounts).insertMany(batch);
    const edges: FollowDoc[] = batch.flatMap((a, k) => {
      const base: Omit<FollowDoc, '_id' | 'accountId' | 'targetAccountId'> = {
        showReblogs: true,
        notify: false,
        languages: null,
        uri: null,
        createdAt: new Date(),
      };
      const out: FollowDoc[] = [
        { _id: BigInt(2 * (from + k) + 1_000_000), accountId: a._id, targetAccountId: star.account._id, ...base },
      ];
      if ((from + k) % 10 === 0)
        out.push({
          _id: BigInt(2 * (from + k) + 1_000_001),
          accountId: viewer.account._id,
          targetAccountId: a._id,
          ...base,
        });
      return out;
    });
    await collection(core.db, follows).insertMany(edges);
  }
  await collection(core.db, accounts).updateOne({ _id: star.account._id }, { $set: { followersCount: FOLLOWERS } });
  console.log(`loaded ${FOLLOWERS} followers in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const get = async (path: string, token: string | null) => {
    const res = await fetch(`${server.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return res.json();
  };
  let cursor = '';
  const followersPage = await timeEach(500, async () => {
    const res = await fetch(`${server.url}/api/v1/accounts/${star.account._id}/followers?limit=40${cursor}`, {
      headers: { authorization: `Bearer ${viewer.token}` },
    });
    const next = /max_id=(\d+)/.exec(res.headers.get('link') ?? '')?.[1];
    cursor = next ? `&max_id=${next}` : '';
    await res.json();
  });
  const ids = (i: number) =>
    Array.from({ length: 40 }, (_, k) => `id[]=${(((i * 40 + k) * 37) % FOLLOWERS) + OFFSET + 1}`).join('&');
  const jvmLogged = mongoGcLog(true);
  const timed: Timed[] = [];
  const relationships = await timeEach(1000, async (i) => {
    const startMs = Date.now();
    await get(`/api/v1/accounts/relationships?${ids(i)}`, viewer.token);
    timed.push({ startMs, endMs: Date.now() });
  });
  if (jvmLogged) mongoGcLog(false);
  // The warm-up's requests are not measured.
  const measured = timed.slice(-1000);
  const fromMs = measured[0]!.startMs;
  const toMs = measured.at(-1)!.endMs;
  const own = (await nodePauseList(ownPauses, fromMs, toMs)) ?? [];
  const jvm = jvmLogged ? await jvmPauseList(jvmLog, fromMs, toMs) : null;
  const rows = [
    ['GET followers, pages of 40 (walking the Link header)', followersPage],
    ['GET relationships, 40 ids', relationships],
  ] as const;
  printTable(
    `graph: ${FOLLOWERS} followers of one account, API and MongoDB-wire server on this machine`,
    ['request', 'p50 ms', 'p99 ms', 'max ms'],
    rows.map(([what, s]) => [what, ms(s.p50), ms(s.p99), ms(s.max)]),
  );
  const tail = slowBursts(
    measured,
    TARGET_MS,
    { 'benchmark process (server and client)': own, ...(jvm ? { 'MongoDB-wire JVM': jvm } : {}) },
    SIGNIFICANT_PAUSE_MS,
  );
  const jvmSummary = jvm ? summarisePauses(jvm) : null;
  console.log(
    `graph: what limits the relationships p99: ${tail.slow} requests over ${TARGET_MS} ms (p99 is the 10th slowest); ` +
      `in ${tail.bursts} bursts; the longest pause inside each burst: ${describeBurstCauses(tail, SIGNIFICANT_PAUSE_MS, 'requests')} (a window as long, anywhere in the phase, holds such a pause ` +
      `${Math.round(tail.byChance * 100)} % of the time); ` +
      (jvmSummary
        ? `the MongoDB-wire JVM stopped ${jvmSummary.count} times in ${((toMs - fromMs) / 1000).toFixed(1)} s, ` +
          `${jvmSummary.totalMs.toFixed(1)} ms in all (${jvmSummary.full.length} full collections)`
        : "the MongoDB-wire JVM's collections not logged (no jcmd, or not a local JVM)"),
  );
  printTargets('graph', [
    {
      what: 'relationships (40 ids) p99',
      measured: `${ms(relationships.p99)} ms`,
      target: `${TARGET_MS} ms`,
      met: relationships.p99 <= TARGET_MS,
    },
  ]);
} finally {
  await server.close();
  await closeTestCore(core);
  rmSync(logs, { recursive: true, force: true });
}
process.exit(0);
