// A running pipeline outlives a restart of its MongoDB: a MongoDB-wire server of this test's own
// (a port it bound, a temporary store) is stopped while the delivery pipeline works and
// started again; the process's liveness check fails while MongoDB is out of reach for longer than
// MONGO_LIVENESS_SECONDS (so an orchestrator would restart it). Once MongoDB is back, either the
// same process answers its checks again, or (the MongoDB driver sometimes stops monitoring after
// a restart: the chaos run saw a process without any connection to MongoDB for 14 minutes) its
// liveness keeps failing and, as the orchestrator would, a new process takes its place. Either
// way what was in flight and what is posted next is delivered; what must never happen is a
// process that neither works nor fails its liveness check.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDeliveryPipeline } from '../../../pipelines/delivery/index.ts';
import { createReadinessChecks } from '../../../services/api/health/readiness.ts';
import { liveness } from '../../../services/core/db/mongoContact.ts';
import { createFollow } from '../../../services/core/graph/follow.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { startInboxSink, type InboxSink } from '../../support/inboxSink.ts';
import { createRemoteAccount, keysFrom } from '../../support/remoteAccounts.ts';
import { ownMongoServer, type OwnMongoServer } from '../../support/mongoServer.ts';

jest.setTimeout(240_000);

let dir: string;
let mongo: OwnMongoServer | null = null;
let api: TestApi | null = null;
let sink: InboxSink | null = null;
let pipeline: { stop(): Promise<void> } | null = null;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fedisrv-mongo-restart-'));
  mongo = ownMongoServer(dir);
  await mongo.start();
  api = await startTestApi({
    MONGO_URL: `mongodb://127.0.0.1:${mongo.port}/restart`,
    MONGO_LIVENESS_SECONDS: '3',
    FEDERATION_ALLOW_HTTP: 'true',
    ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
  });
  sink = await startInboxSink(keysFrom(api.core));
  pipeline = await runDeliveryPipeline(api.core, { settings, planner: consumerTuning, worker });
});

let stuck: { api: TestApi; pipeline: { stop(): Promise<void> } } | null = null;

afterAll(async () => {
  await pipeline?.stop();
  await sink?.close();
  await api?.close();
  // A process left stuck cannot drop what the new one already dropped.
  await stuck?.api.core.close().catch(() => undefined);
  await stuck?.api.server.close().catch(() => undefined);
  await mongo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const settings = { partitions: 2 };
const worker = { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 };

test('after MongoDB restarts under it, the pipeline delivers again or its liveness fails', async () => {
  const { core } = api!;
  const alice = await createTestUser(core);
  const bob = await createRemoteAccount(core, sink!.url, 'bob', { domain: 'a.example' });
  await createFollow(core, bob as AccountDoc, alice.account, {}, null);
  const creates = () => sink!.received.filter((r) => r.body.type === 'Create').map((r) => r.body.object);
  const contents = () => creates().map((o) => String((o as { content?: string }).content ?? ''));
  const post = async (text: string) => {
    const res = await api!.call('POST', '/api/v1/statuses', alice.token, { status: text });
    return res.status;
  };

  expect(await post('before the restart')).toBe(200);
  await eventually(async () => contents().some((c) => c.includes('before the restart')), 30_000, 'first Create');
  expect(liveness(core.mongoContact).status).toBe(200);

  // Work in flight when MongoDB dies: a few posts whose deliveries are being planned and sent.
  for (let i = 0; i < 3; i++) expect(await post(`in flight ${i}`)).toBe(200);
  // As the chaos run restarts it (and an operator would): SIGTERM, the server stores what it has.
  await mongo!.stop('SIGTERM');
  await eventually(async () => liveness(core.mongoContact).status === 503, 30_000, 'liveness failing');
  expect(liveness(core.mongoContact).body).toMatch(/^MongoDB unreachable for \d+ s$/);

  await mongo!.start();
  const recovered = await eventually(async () => liveness(core.mongoContact).status === 200, 45_000, 'liveness back')
    .then(() => true)
    .catch(() => false);
  if (recovered) {
    const readiness = createReadinessChecks(core);
    try {
      await eventually(async () => (await readiness.check()).mongodb.status === 'up', 30_000, 'readiness back');
    } finally {
      await readiness.close();
    }
  } else {
    // Stuck: liveness still fails, so the orchestrator replaces the process. Do the same: a new
    // process on the same database, namespace and topics.
    expect(liveness(core.mongoContact).status).toBe(503);
    stuck = { api: api!, pipeline: pipeline! };
    const { mongoUrl, redisNamespace, kafkaTopicPrefix } = core.config;
    api = await startTestApi({
      MONGO_URL: mongoUrl,
      REDIS_NAMESPACE: redisNamespace,
      KAFKA_TOPIC_PREFIX: kafkaTopicPrefix,
      MONGO_LIVENESS_SECONDS: '3',
      FEDERATION_ALLOW_HTTP: 'true',
      ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
    });
    pipeline = await runDeliveryPipeline(api.core, { settings, planner: consumerTuning, worker });
    // Its consumers leave the groups (a killed pod's would after the session timeout).
    await Promise.race([stuck.pipeline.stop().catch(() => undefined), new Promise((r) => setTimeout(r, 30_000))]);
    expect(liveness(api.core.mongoContact).status).toBe(200);
  }
  // Delivered again: what was in flight and what comes next.
  await eventually(async () => (await post('after the restart')) === 200, 30_000, 'posting again');
  await eventually(async () => contents().some((c) => c.includes('after the restart')), 60_000, 'Create after');
  // What failed while MongoDB was away waits out its retry delay (up to 60 s after a third
  // failure), so it may arrive after what was posted next.
  for (let i = 0; i < 3; i++)
    await eventually(async () => contents().some((c) => c.includes(`in flight ${i}`)), 120_000, `in flight ${i}`);
});
