// `npm run bench -- inbox [--activities=2000] [--concurrency=16]`: inbox throughput of one API
// process (signed `Create{Note}` POSTs from a remote actor whose key is cached, answered 202 once
// the activity is on the inbound topic), the cost of one signature verification with a cached key,
// and the ingress pipeline (one in-process consumer) storing all of them as statuses. Targets
// (ours; the issue names none): inbox ≥ 300 activities/s, ingress ≥ 100 activities/s.
import { createPrivateKey, randomBytes } from 'node:crypto';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { accounts, type AccountDoc } from '../../services/core/model/accounts.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { recordFollow } from '../../services/core/graph/relations.ts';
import { generateActorKeyPair } from '../../services/core/accounts/keys.ts';
import { signRequest, verifyRequest } from '../../services/core/activitypub/httpSignatures.ts';
import { keyResolver } from '../../services/core/activitypub/actors.ts';
import { buildApi } from '../../services/api/app.ts';
import { runIngressPipeline } from '../../pipelines/ingress/index.ts';
import { createTestUser } from '../support/fixtures.ts';
import { deleteTestTopics } from '../support/kafka.ts';
import { printTable, printTargets } from './lib.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(option('activities') ?? 2_000);
const CONCURRENCY = Number(option('concurrency') ?? 16);
const REMOTE = 'https://remote.bench.example';

const name = `bench_inbox_${randomBytes(4).toString('hex')}`;
const mongo = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
mongo.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: mongo.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
  KAFKA_PARTITIONS: '4',
  LOCAL_DOMAIN: 'bench.local',
  LOG_LEVEL: 'warn',
});
const logger = createLogger('warn', 'bench');
const sink = await createKafkaEventSink(config, logger);
const core = await createCore(config, { sink, logger });
const api = await buildApi(core);
await api.listen({ host: '127.0.0.1', port: 0 });
const port = (api.server.address() as { port: number }).port;

try {
  const alice = await createTestUser(core, { username: 'alice' });
  const keys = await generateActorKeyPair();
  const privateKey = createPrivateKey(keys.privateKeyPem);
  const actorUri = `${REMOTE}/users/bob`;
  const remote: AccountDoc = {
    ...alice.account,
    _id: 900_000_001n,
    username: 'bob',
    usernameLower: 'bob',
    domain: 'remote.bench.example',
    uri: actorUri,
    url: `${REMOTE}/@bob`,
    inboxUrl: `${actorUri}/inbox`,
    sharedInboxUrl: `${REMOTE}/inbox`,
    followersUrl: `${actorUri}/followers`,
    publicKeyPem: keys.publicKeyPem,
    privateKeyPem: null,
    keyId: `${actorUri}#main-key`,
    lastFetchedAt: new Date(),
  };
  await collection(core.db, accounts).insertOne(remote);
  await recordFollow(core, alice.account._id, remote._id);
  const key = { keyId: `${actorUri}#main-key`, privateKey };
  const inbox = `http://127.0.0.1:${port}/inbox`;

  const request = (i: number) => {
    const note = `${actorUri}/statuses/${i}`;
    const body = JSON.stringify({
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${note}/activity`,
      type: 'Create',
      actor: actorUri,
      to: ['https://www.w3.org/ns/activitystreams#Public'],
      cc: [`${actorUri}/followers`],
      object: {
        id: note,
        type: 'Note',
        attributedTo: actorUri,
        content: `<p>bench ${i}</p>`,
        to: ['https://www.w3.org/ns/activitystreams#Public'],
        cc: [`${actorUri}/followers`],
      },
    });
    const headers = signRequest({
      method: 'POST',
      url: inbox,
      headers: { 'content-type': 'application/activity+json' },
      body,
      key,
    });
    delete headers.host; // fetch sends the same Host itself
    return { body, headers };
  };

  // Verification alone, cached key.
  const sample = request(0);
  sample.headers.host = `127.0.0.1:${port}`;
  const resolve = keyResolver(core);
  await verifyRequest(
    { method: 'POST', url: '/inbox', headers: sample.headers, body: Buffer.from(sample.body) },
    resolve,
  );
  const VERIFY = 500;
  const v0 = performance.now();
  for (let i = 0; i < VERIFY; i++)
    await verifyRequest(
      { method: 'POST', url: '/inbox', headers: sample.headers, body: Buffer.from(sample.body) },
      resolve,
    );
  const verifyMs = (performance.now() - v0) / VERIFY;

  // Inbox throughput over HTTP (signing happens before the clock starts).
  const prepared = Array.from({ length: N }, (_, i) => request(i + 1));
  let next = 0;
  let refused = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const r = prepared[next++];
        const res = await fetch(inbox, {
          method: 'POST',
          headers: r.headers,
          body: r.body,
        });
        if (res.status !== 202) refused++;
        await res.arrayBuffer();
      }
    }),
  );
  const inboxS = (performance.now() - t0) / 1000;
  if (refused > 0) throw new Error(`${refused} of ${N} inbox requests were not accepted`);

  // Ingress: one consumer, until every activity is a stored status.
  const i0 = performance.now();
  const pipeline = await runIngressPipeline(core, { lagIntervalMs: 0, maxWaitTimeInMs: 100 });
  const deadline = Date.now() + 600_000;
  while ((await collection(core.db, statuses).countDocuments({ accountId: remote._id })) < N) {
    if (Date.now() > deadline) throw new Error('ingress did not finish in 10 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const ingressS = (performance.now() - i0) / 1000;
  await pipeline.stop();

  const inboxRate = N / inboxS;
  const ingressRate = N / ingressS;
  printTable(
    `inbox: ${N} signed Create activities, ${CONCURRENCY} concurrent senders, one API process`,
    ['measured', 'value'],
    [
      ['signature verification (cached key)', `${verifyMs.toFixed(2)} ms each`],
      ['inbox: signed POSTs accepted (202)', `${Math.round(inboxRate)}/s (${inboxS.toFixed(2)} s)`],
      [
        'ingress: activities stored as statuses (1 consumer)',
        `${Math.round(ingressRate)}/s (${ingressS.toFixed(2)} s)`,
      ],
    ],
  );
  printTargets('inbox', [
    { what: 'inbox throughput', measured: `${Math.round(inboxRate)}/s`, target: '≥ 300/s', met: inboxRate >= 300 },
    {
      what: 'ingress throughput',
      measured: `${Math.round(ingressRate)}/s`,
      target: '≥ 100/s',
      met: ingressRate >= 100,
    },
  ]);
} finally {
  await api.close();
  await core.db.dropDatabase().catch(() => undefined);
  await core.close();
  await deleteTestTopics(config).catch(() => undefined);
}
