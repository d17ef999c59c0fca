// `npm run bench -- streaming [--connections=10000] [--followers=1000] [--posts=20]`: one streaming
// process (`services/main.ts streaming`) holding N WebSocket connections, `followers` of them the
// `user` streams of local followers of a poster, the rest logged-out hashtag streams spread over
// 500 tags (each its own Redis channel). An API process takes the posts and a `pipeline fanout`
// process fans them out from Kafka, all on the local servers. Measured: the streaming process's
// RSS with every connection open, and for each post the time from the POST's answer until the
// last follower's socket got the `update`. Targets: RSS under 1 GB with 10,000 connections; the
// last update p99 under 250 ms.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadConfig, type Config } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { users, type UserDoc } from '../../services/core/model/users.ts';
import { follows, type FollowDoc } from '../../services/core/model/follows.ts';
import { issueAccessToken } from '../../services/core/oauth/tokens.ts';
import { closeTestCore } from '../support/core.ts';
import { createTestUser } from '../support/fixtures.ts';
import { accountDoc } from './dataSet.ts';
import { ms, onTraceLines, printTable, printTargets, startRole, stats } from './lib.ts';
import { markActive } from '../../services/core/feeds/activity.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CONNECTIONS = Number(option('connections') ?? 10_000);
const FOLLOWERS = Math.min(CONNECTIONS, Number(option('followers') ?? 1000));
const POSTS = Number(option('posts') ?? 20);
const TAGS = 500;

const name = `bench_streaming_${randomBytes(4).toString('hex')}`;
const mongo = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
mongo.pathname = `/${name}`;
const config: Config = loadConfig({
  ...process.env,
  MONGO_URL: mongo.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
  LOG_LEVEL: 'warn',
});

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * Stage timestamps (epoch ms) per status id from the child processes' `trace` lines (TRACE_STAGES,
 * services/core/streaming/latencyTrace.ts): the earliest of each stage, the latest `stream.sent`.
 */
const stages = new Map<string, Map<string, number>>();
function readTraces(child: ChildProcess): void {
  onTraceLines(child, ({ id, stage, at }) => {
    let byStage = stages.get(id);
    if (!byStage) stages.set(id, (byStage = new Map()));
    const known = byStage.get(stage);
    const latest = stage === 'stream.sent' || stage === 'fanout.published' || stage === 'fanout.written';
    if (known === undefined || (latest ? at > known : at < known)) byStage.set(stage, at);
  });
}
const STAGES: Array<[string, string]> = [
  ['written', 'API: status and outbox written'],
  ['kafka.timestamp', 'API: Kafka record created (producer timestamp)'],
  ['produced', 'API: Kafka acknowledged the record'],
  ['answered', 'POST answered (0)'],
  ['consumed', 'fan-out: record consumed'],
  ['fanout.queried', 'fan-out: followers and filters queried'],
  ['fanout.rendered', 'fan-out: status rendered'],
  ['fanout.written', 'fan-out: feeds written'],
  ['fanout.published', 'fan-out: updates published'],
  ['stream.received', 'streaming: first update received'],
  ['stream.sent', 'streaming: last update sent'],
  ['client.first', 'bench client: first socket has it'],
  ['client.last', 'bench client: last socket has it'],
];

/** Arrival times (ms, performance.now) of updates per status id, per follower socket. */
const arrivals = new Map<string, number[]>();
const sockets: WebSocket[] = [];

let stopping = false;
let reconnects = 0;

/** Opens a socket; a follower's socket that the server closes is reopened, as clients do. */
function openSocket(url: string, onUpdate: ((id: string) => void) | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener(
      'error',
      () => reject(new Error(`WebSocket refused: ${url.replace(/access_token=[^&]+/, '')}`)),
      {
        once: true,
      },
    );
    if (onUpdate) {
      ws.addEventListener('message', (e) => {
        const m = JSON.parse(String(e.data)) as { event?: string; payload?: string };
        if (m.event === 'update' && m.payload) onUpdate((JSON.parse(m.payload) as { id: string }).id);
      });
      ws.addEventListener('close', () => {
        if (stopping) return;
        reconnects++;
        setTimeout(() => void openSocket(url, onUpdate).catch(() => undefined), 100);
      });
    }
    sockets.push(ws);
  });
}

const core = await createCore(config, { sink: { publish: async () => undefined } });
const children: ChildProcess[] = [];
try {
  // The poster (a real sign-up as template) and its followers, each a user with a token.
  const poster = await createTestUser(core);
  const followerAccounts = Array.from({ length: FOLLOWERS }, (_, i) => ({ ...accountDoc(20_000 + i), domain: null }));
  await collection(core.db, accounts).insertMany(followerAccounts);
  const userDocs: UserDoc[] = followerAccounts.map((a, i) => ({
    ...poster.user,
    _id: 20_000n + BigInt(i),
    accountId: a._id,
    email: `${a.username}@bench.test`,
    emailLower: `${a.username}@bench.test`,
  }));
  await collection(core.db, users).insertMany(userDocs);
  // Users of the app: active, so the fan-out feeds them (a sign-up or API use would mark them).
  await markActive(
    core,
    followerAccounts.map((a) => a._id),
    'ok',
  );
  await collection(core.db, follows).insertMany(
    followerAccounts.map((a): FollowDoc => ({
      _id: a._id,
      accountId: a._id,
      targetAccountId: poster.account._id,
      showReblogs: true,
      notify: false,
      languages: null,
      uri: null,
      createdAt: new Date(),
    })),
  );
  const tokens: string[] = [];
  for (const u of userDocs)
    tokens.push(
      (await issueAccessToken(core, { appId: poster.app._id, userId: u._id, scopes: ['read'], reuse: false })).token,
    );

  const streaming = await startRole(config, ['streaming'], { TRACE_STAGES: '1' });
  children.push(streaming);
  readTraces(streaming);
  const api = await startRole(config, ['api'], { TRACE_STAGES: '1' });
  children.push(api);
  readTraces(api);
  const fanout = await startRole(config, ['pipeline', 'fanout'], { TRACE_STAGES: '1' });
  children.push(fanout);
  readTraces(fanout);
  const base = `http://127.0.0.1:${api.port}`;
  const ws = `ws://127.0.0.1:${streaming.streamingPort}/api/v1/streaming`;

  // Connections: the followers' user streams, then logged-out hashtag streams, 200 at a time.
  const rssBefore = await rssMb(streaming.pid!);
  const openStart = performance.now();
  const urls: { url: string; follower: boolean }[] = [
    ...tokens.map((t) => ({ url: `${ws}?access_token=${t}&stream=user`, follower: true })),
    ...Array.from({ length: CONNECTIONS - FOLLOWERS }, (_, i) => ({
      url: `${ws}?stream=hashtag&tag=idle${i % TAGS}`,
      follower: false,
    })),
  ];
  for (let i = 0; i < urls.length; i += 200) {
    await Promise.all(
      urls.slice(i, i + 200).map(({ url, follower }) =>
        openSocket(
          url,
          follower
            ? (id) => {
                // Kept by id from the first arrival: an update may come before the POST's answer.
                const list = arrivals.get(id);
                if (list) list.push(performance.now());
                else arrivals.set(id, [performance.now()]);
              }
            : null,
        ),
      ),
    );
  }
  const openSeconds = (performance.now() - openStart) / 1000;

  const post = async (text: string): Promise<{ id: string; answeredAt: number }> => {
    const res = await fetch(`${base}/api/v1/statuses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${poster.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: text }),
    });
    const answeredAt = performance.now();
    if (res.status !== 200) throw new Error(`POST /api/v1/statuses: ${res.status} ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    return { id, answeredAt };
  };
  /** Posts and waits until every follower socket has the update (or `timeoutMs`); ms until the last. */
  const measure = async (
    text: string,
    timeoutMs: number,
  ): Promise<{ id: string; first: number; last: number; each: number[]; got: number }> => {
    const { id, answeredAt } = await post(text);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const got = arrivals.get(id) ?? [];
      if (got.length >= FOLLOWERS || performance.now() > deadline) {
        const each = got.map((t) => t - answeredAt);
        const byStage = stages.get(id) ?? new Map<string, number>();
        stages.set(id, byStage);
        byStage.set('answered', performance.timeOrigin + answeredAt);
        if (got.length > 0) {
          byStage.set('client.first', performance.timeOrigin + Math.min(...got));
          byStage.set('client.last', performance.timeOrigin + Math.max(...got));
        }
        return { id, first: Math.min(...each), last: Math.max(...each, 0), each, got: got.length };
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  // The user streams subscribe after the upgrade and the pipeline's consumer joins its group
  // after starting: warm up until one post reaches every follower.
  const warmDeadline = Date.now() + 180_000;
  for (let round = 0; ; round++) {
    const warm = await measure(`warm-up ${round}`, 5_000);
    if (warm.got >= FOLLOWERS) break;
    if (Date.now() > warmDeadline) throw new Error(`warm-up: only ${warm.got} of ${FOLLOWERS} sockets got a post`);
  }
  const rss = await rssMb(streaming.pid!);

  const measuredIds: string[] = [];
  const lasts: number[] = [];
  const firsts: number[] = [];
  const all: number[] = [];
  let incomplete = 0;
  for (let i = 0; i < POSTS; i++) {
    const r = await measure(`measured post ${i}`, 10_000);
    if (r.got < FOLLOWERS) incomplete++;
    measuredIds.push(r.id);
    lasts.push(r.last);
    firsts.push(r.first);
    all.push(...r.each);
    await new Promise((res) => setTimeout(res, 200));
  }
  const last = stats(lasts);
  const first = stats(firsts);
  const each = stats(all);
  const rssAfter = await rssMb(streaming.pid!);
  printTable(
    `streaming: ${CONNECTIONS} WebSocket connections to one streaming process (${FOLLOWERS} user streams of followers, ${CONNECTIONS - FOLLOWERS} logged-out hashtag streams over ${TAGS} tags); ${POSTS} posts`,
    ['measure', 'value'],
    [
      ['connections opened in', `${openSeconds.toFixed(1)} s`],
      ['streaming RSS before connections', `${rssBefore.toFixed(0)} MB`],
      ['streaming RSS with all connections', `${rss.toFixed(0)} MB`],
      ['streaming RSS after the posts', `${rssAfter.toFixed(0)} MB`],
      ['update per follower, p50 / p99 after the POST answer', `${ms(each.p50)} / ${ms(each.p99)} ms`],
      ['first follower per post, p50 / p99 (negative: before the answer)', `${ms(first.p50)} / ${ms(first.p99)} ms`],
      ['last follower per post, p50 / p99 / max', `${ms(last.p50)} / ${ms(last.p99)} / ${ms(last.max)} ms`],
      ['posts not delivered to every follower within 10 s', String(incomplete)],
      ['follower sockets closed by the server and reopened', String(reconnects)],
    ],
  );
  // Where the time goes: each stage relative to the POST's answer, over the measured posts.
  await new Promise((r) => setTimeout(r, 200)); // the children's last trace lines
  printTable(
    'streaming: stages of a post, ms relative to the POST answer (TRACE_STAGES)',
    ['stage', 'p50', 'p99'],
    STAGES.map(([stage, what]) => {
      const offsets = measuredIds.flatMap((id) => {
        const byStage = stages.get(id);
        const at = byStage?.get(stage);
        const answered = byStage?.get('answered');
        return at !== undefined && answered !== undefined ? [at - answered] : [];
      });
      const st = stats(offsets);
      return [what, ms(st.p50), ms(st.p99)];
    }),
  );
  printTargets('streaming', [
    {
      what: `RSS with ${CONNECTIONS} connections`,
      measured: `${Math.max(rss, rssAfter).toFixed(0)} MB`,
      target: '1024 MB',
      met: Math.max(rss, rssAfter) < 1024,
    },
    {
      what: `last of ${FOLLOWERS} followers' update p99`,
      measured: `${ms(last.p99)} ms`,
      target: '250 ms',
      met: last.p99 < 250 && incomplete === 0,
    },
  ]);
} finally {
  stopping = true;
  for (const s of sockets) s.close();
  for (const child of children) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  await closeTestCore(core).catch(() => undefined);
}
process.exit(0);
