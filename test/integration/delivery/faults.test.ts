// Delivery under faults, on the real servers with time scaled down (retry delays of a second
// instead of minutes): a server answering 503 for a while and then coming back gets every activity
// exactly once and, per object, in order (Create before Update before Delete); a server that never
// answers trips its circuit breaker, its jobs are parked, not dropped, and deliveries to a healthy
// server keep their latency meanwhile; once the dead server shows it is back (as a signed inbound
// request would tell us), its parked jobs arrive. A 429 with Retry-After waits that long; a 410
// from a follower's inbox ends that follow; a 400 is not retried.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { registry } from '../../../services/core/metrics.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { parkedDeliveries } from '../../../services/core/model/parkedDeliveries.ts';
import { createFollow } from '../../../services/core/graph/follow.ts';
import { allHostStates, markHostAvailable } from '../../../services/core/activitypub/delivery/hostState.ts';
import { runDeliveryPipeline } from '../../../pipelines/delivery/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { startInboxSink, type InboxSink, type ReceivedActivity } from '../../support/inboxSink.ts';
import { createRemoteAccount, keysFrom } from '../../support/remoteAccounts.ts';

let api: TestApi;
let core: Core;
let flaky: InboxSink;
let dead: InboxSink;
let healthy: InboxSink;
let picky: InboxSink;
let pipeline: { stop(): Promise<void> };

beforeAll(async () => {
  api = await startTestApi({ FEDERATION_ALLOW_HTTP: 'true', ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32' });
  core = api.core;
  [flaky, dead, healthy, picky] = await Promise.all([1, 2, 3, 4].map(() => startInboxSink(keysFrom(core))));
  pipeline = await runDeliveryPipeline(core, {
    settings: {
      partitions: 2,
      retryDelaysMs: Array.from({ length: 16 }, (_, i) => Math.min(400 * 2 ** i, 1_500)),
      delayTiersMs: [200],
      breakerFailures: 4,
      breakerMinSpanMs: 0,
      probeIntervalMs: 1_000,
      connectTimeoutMs: 1_000,
      totalTimeoutMs: 1_500,
    },
    planner: consumerTuning,
    worker: { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, housekeepingMs: 250, gaugesMs: 250 },
  });
});

afterAll(async () => {
  await pipeline?.stop();
  await Promise.all([flaky, dead, healthy, picky].map((s) => s?.close()));
  await api?.close();
});

const accepted = (s: InboxSink) => s.received.filter((r) => r.status === 202 && r.verified);
const objectId = (r: ReceivedActivity) => {
  const o = r.body.object as string | { id?: string } | undefined;
  return typeof o === 'string' ? o : (o?.id ?? '');
};

test('a 503 server gets each activity once and in order; a dead one is parked without slowing others', async () => {
  const alice = await createTestUser(core);
  const a = alice.account;
  const bob = await createRemoteAccount(core, flaky.url, 'bob', { domain: 'flaky.example' });
  const dan = await createRemoteAccount(core, dead.url, 'dan', { domain: 'dead.example' });
  const hal = await createRemoteAccount(core, healthy.url, 'hal', { domain: 'healthy.example' });
  const recoverAt = Date.now() + 5_000;
  flaky.respond = () => (Date.now() < recoverAt ? 503 : 202);
  dead.respond = () => 'hang';
  for (const f of [bob, dan, hal]) await createFollow(core, f, a, {}, null);

  // Three posts, the second edited and the third deleted, all while the flaky server fails.
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const res = await api.call('POST', '/api/v1/statuses', alice.token, { status: text });
    expect(res.status).toBe(200);
    ids.push(res.body.id as string);
  }
  expect((await api.call('PUT', `/api/v1/statuses/${ids[1]}`, alice.token, { status: 'two, edited' })).status).toBe(
    200,
  );
  expect((await api.call('DELETE', `/api/v1/statuses/${ids[2]}`, alice.token)).status).toBe(200);

  // The healthy server has them all at once (1 Accept + 3 Create + Update + Delete).
  await eventually(async () => accepted(healthy).length === 6, 60_000, 'healthy server has everything');
  // The dead one trips its breaker; its jobs are parked.
  const deadHost = new URL(dead.url).host;
  await eventually(
    async () => (await allHostStates(core.redis)).some((s) => s.host === deadHost && s.tripped > 0),
    30_000,
    'dead server breaker open',
  );
  await eventually(
    async () => (await collection(core.db, parkedDeliveries).countDocuments({ host: deadHost })) >= 1,
    10_000,
    'parked jobs',
  );

  // The metrics show it: one open breaker, jobs waiting for that domain, their age.
  await eventually(
    async () => {
      const text = await registry.metrics();
      const depth = new RegExp(`activitypub_delivery_queue_depth\\{domain="${deadHost}"\\} (\\d+)`).exec(text);
      return /activitypub_delivery_breakers_open [1-9]/.test(text) && Number(depth?.[1] ?? 0) >= 1;
    },
    10_000,
    'breaker and queue depth in /metrics',
  );
  expect(await registry.metrics()).toMatch(/activitypub_delivery_failures_total\{class="http_5xx"\} [1-9]/);

  // While it is tripped, a new post reaches the healthy server quickly.
  const before = Date.now();
  const late = await api.call('POST', '/api/v1/statuses', alice.token, { status: 'while tripped' });
  await eventually(async () => accepted(healthy).length === 7, 10_000, 'late post at the healthy server');
  const latencyMs = accepted(healthy)[6].at - before;
  console.log(`healthy peer latency while a dead peer is tripped: ${latencyMs} ms`);
  expect(latencyMs).toBeLessThan(5_000);

  // The flaky server recovers: everything, exactly once, in order per object.
  await eventually(async () => accepted(flaky).length === 7, 40_000, 'flaky server caught up');
  const got = accepted(flaky);
  if (process.env.DEBUG_DELIVERY)
    console.log(flaky.received.map((r) => `${r.at} ${r.status} ${String(r.body.type)} ${objectId(r)}`).join('\n'));
  const activityIds = got.map((r) => String(r.body.id));
  expect(new Set(activityIds).size).toBe(activityIds.length);
  const statusUri = (id: string) => `${a.uri}/statuses/${id}`;
  const typesFor = (id: string) => got.filter((r) => objectId(r) === statusUri(id)).map((r) => r.body.type);
  expect(typesFor(ids[1])).toEqual(['Create', 'Update']);
  expect(typesFor(ids[2])).toEqual(['Create', 'Delete']);
  expect(typesFor(late.body.id as string)).toEqual(['Create']);
  // One author's activities reach a server in the order they happened, across objects too.
  const sequence = got.filter((r) => r.body.type !== 'Accept').map((r) => `${String(r.body.type)} ${objectId(r)}`);
  expect(sequence).toEqual([
    `Create ${statusUri(ids[0])}`,
    `Create ${statusUri(ids[1])}`,
    `Create ${statusUri(ids[2])}`,
    `Update ${statusUri(ids[1])}`,
    `Delete ${statusUri(ids[2])}`,
    `Create ${statusUri(late.body.id as string)}`,
  ]);

  // The dead server comes back and sends us something signed: its parked jobs go out.
  dead.respond = () => 202;
  await markHostAvailable(core.redis, deadHost);
  await eventually(async () => accepted(dead).length === 7, 30_000, 'dead server caught up');
  const deadIds = accepted(dead).map((r) => String(r.body.id));
  expect(new Set(deadIds).size).toBe(deadIds.length);
  expect(await collection(core.db, parkedDeliveries).countDocuments({ host: deadHost })).toBe(0);
}, 300_000);

test('429 waits for Retry-After; 410 from a follower ends the follow; 400 is final', async () => {
  const alice = await createTestUser(core);
  const slow = await createRemoteAccount(core, picky.url, 'slow', { domain: 'picky.example', sharedInbox: false });
  const gone = await createRemoteAccount(core, picky.url, 'gone', { domain: 'picky.example', sharedInbox: false });
  const rude = await createRemoteAccount(core, picky.url, 'rude', { domain: 'picky.example', sharedInbox: false });
  let first429: number | null = null;
  picky.respond = ({ path }) => {
    if (path === '/users/gone/inbox') return 410;
    if (path === '/users/rude/inbox') return 400;
    if (path === '/users/slow/inbox' && first429 === null) {
      first429 = Date.now();
      return { status: 429, headers: { 'Retry-After': '2' } };
    }
    return 202;
  };
  for (const f of [slow, gone, rude]) await createFollow(core, f, alice.account, {}, null);
  await eventually(
    async () => picky.received.filter((r) => r.path === '/users/rude/inbox').length === 1,
    30_000,
    'Accept to rude (answered 400)',
  );
  await eventually(
    async () => picky.received.filter((r) => r.path === '/users/slow/inbox' && r.status === 202).length === 1,
    30_000,
    'Accept to slow after Retry-After',
  );
  const retried = picky.received.find((r) => r.path === '/users/slow/inbox' && r.status === 202)!;
  expect(retried.at - first429!).toBeGreaterThanOrEqual(1_900);
  await eventually(
    async () => (await collection(core.db, follows).countDocuments({ accountId: gone._id })) === 0,
    20_000,
    'follow of the gone account removed',
  );
  expect(await collection(core.db, follows).countDocuments({ accountId: rude._id })).toBe(1);
  expect(picky.received.filter((r) => r.path === '/users/rude/inbox')).toHaveLength(1);
}, 60_000);
