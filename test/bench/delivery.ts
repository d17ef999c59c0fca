// `npm run bench -- delivery [--followers=10000] [--servers=2000]`: one public status from an
// account whose followers sit on many remote servers, delivered by real `pipeline delivery`
// processes (services/main.ts: planner + worker) to a local HTTP sink that plays every server (one
// listening port each) and verifies each request's signature and Digest. Measured from postStatus'
// return until the last server's shared inbox has the Create; deliveries/s over that time. Run with
// one and with two delivery processes; the first status of a scenario (cold: new connections) is
// reported too. Target: every inbox within 10 s.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeTestCore } from '../support/core.ts';
import { loadConfig, type Config } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows, type FollowDoc } from '../../services/core/model/follows.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { verifyRequest } from '../../services/core/activitypub/httpSignatures.ts';
import { createTestUser } from '../support/fixtures.ts';
import { accountDoc } from './dataSet.ts';
import { printTable, printTargets, startRole, stopRole, type Target } from './lib.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const FOLLOWERS = Number(option('followers') ?? 10_000);
const SERVERS = Number(option('servers') ?? 2_000);
const TARGET_S = 10;
const PROCESSES = (option('processes') ?? '1,2').split(',').map(Number);
const childLogs: string[] = [];

function scenarioConfig(): Config {
  const name = `bench_delivery_${randomBytes(4).toString('hex')}`;
  const url = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
  url.pathname = `/${name}`;
  return loadConfig({
    ...process.env,
    MONGO_URL: url.toString(),
    REDIS_NAMESPACE: name,
    KAFKA_TOPIC_PREFIX: name,
    KAFKA_PARTITIONS: '4',
    FEDERATION_ALLOW_HTTP: 'true',
    ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
  });
}

/** SERVERS listening ports sharing one handler: each verifies the signature and records the arrival. */
async function startSink(core: Core) {
  const keys = new Map<string, { publicKeyPem: string; owner: string } | null>();
  const arrivals = new Map<string, Map<number, number>>(); // object id → port → time
  let verified = 0;
  let refused = 0;
  const servers: Server[] = [];
  const resolveKey = async (keyId: string) => {
    const actor = keyId.replace(/#.*$/, '');
    if (!keys.has(actor)) {
      const a = await collection(core.db, accounts).findOne(
        { uri: actor },
        { projection: { publicKeyPem: 1, uri: 1 } },
      );
      keys.set(actor, a ? { publicKeyPem: a.publicKeyPem, owner: a.uri } : null);
    }
    return keys.get(actor) ?? null;
  };
  for (let i = 0; i < SERVERS; i++) {
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        verifyRequest({ method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers, body }, resolveKey)
          .then((result) => {
            if (!result.ok) {
              refused++;
              res.writeHead(401).end();
              return;
            }
            verified++;
            const activity = JSON.parse(body.toString('utf8')) as { object?: { id?: string } };
            const id = activity.object?.id ?? '';
            const port = (req.socket.address() as AddressInfo).port;
            let perPort = arrivals.get(id);
            if (!perPort) arrivals.set(id, (perPort = new Map()));
            if (!perPort.has(port)) perPort.set(port, Date.now());
            res.writeHead(202).end();
          })
          .catch(() => res.writeHead(500).end());
      });
    });
    server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  return {
    ports: servers.map((s) => (s.address() as AddressInfo).port),
    arrivals,
    counts: () => ({ verified, refused }),
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
    },
  };
}

async function load(core: Core, ports: number[]) {
  const star = await createTestUser(core);
  const base = 1_000;
  for (let from = 0; from < FOLLOWERS; from += 5000) {
    const batch = Array.from({ length: Math.min(5000, FOLLOWERS - from) }, (_, k) => {
      const i = from + k;
      const port = ports[i % ports.length];
      const server = `http://127.0.0.1:${port}`;
      const doc = accountDoc(base + i);
      return {
        ...doc,
        domain: `s${i % ports.length}.example`,
        uri: `${server}/users/${doc.username}`,
        inboxUrl: `${server}/users/${doc.username}/inbox`,
        sharedInboxUrl: `${server}/inbox`,
      };
    });
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
  return star;
}

interface Result {
  coldS: number;
  warmS: number;
}

async function waitAll(arrivals: Map<string, Map<number, number>>, id: string, t0: number): Promise<number> {
  for (;;) {
    const got = arrivals.get(id);
    if (got && got.size >= SERVERS) return (Math.max(...got.values()) - t0) / 1000;
    if (Date.now() - t0 > 300_000) throw new Error(`only ${got?.size ?? 0} of ${SERVERS} inboxes after 300 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function scenario(processes: number): Promise<Result> {
  const config = scenarioConfig();
  const logger = createLogger('warn', 'bench');
  const core = await createCore(config, { sink: await createKafkaEventSink(config, logger) });
  const sink = await startSink(core);
  const children: ChildProcess[] = [];
  try {
    const star = await load(core, sink.ports);
    for (let i = 0; i < processes; i++) {
      const child = await startRole(config, ['pipeline', 'delivery'], {
        FEDERATION_ALLOW_HTTP: 'true',
        ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
      });
      child.stdout!.on('data', (d: Buffer) => {
        for (const line of d.toString().split('\n')) if (line.includes('delivery planned')) childLogs.push(line);
      });
      children.push(child);
    }
    // Cold: the first status (new connections to every server, consumers just joined).
    const cold = await postStatus(core, star.account, { text: 'cold start' });
    const coldS = await waitAll(sink.arrivals, cold.uri, Date.now());
    await new Promise((r) => setTimeout(r, 1_000));
    const warm = await postStatus(core, star.account, { text: `to ${FOLLOWERS} followers on ${SERVERS} servers` });
    const warmS = await waitAll(sink.arrivals, warm.uri, Date.now());
    const { refused } = sink.counts();
    if (refused > 0) throw new Error(`${refused} deliveries failed signature verification`);
    return { coldS, warmS };
  } finally {
    for (const child of children) await stopRole(child);
    await sink.close();
    // The database, the Redis namespace and the Kafka topics: a broker left with every run's topics
    // starts slowly and answers metadata late.
    await closeTestCore(core).catch(() => undefined);
  }
}

const rows: string[][] = [];
const targets: Target[] = [];
for (const processes of PROCESSES) {
  const r = await scenario(processes);
  const rate = (s: number) => `${Math.round(SERVERS / s)}/s`;
  console.log(`  ${processes} process(es): cold ${r.coldS.toFixed(2)} s, warm ${r.warmS.toFixed(2)} s`);
  rows.push([
    String(processes),
    `${r.coldS.toFixed(2)} s (${rate(r.coldS)})`,
    `${r.warmS.toFixed(2)} s (${rate(r.warmS)})`,
  ]);
  targets.push({
    what: `one status to ${FOLLOWERS} followers on ${SERVERS} servers, ${processes} delivery process${processes > 1 ? 'es' : ''}, last inbox after`,
    measured: `${r.warmS.toFixed(2)} s`,
    target: `${TARGET_S} s`,
    met: r.warmS <= TARGET_S,
  });
}
printTable(
  `delivery: one status, ${FOLLOWERS} followers on ${SERVERS} servers (one signature-verifying sink); time until the last shared inbox has it (deliveries/s)`,
  ['processes', 'first status (cold connections)', 'second status'],
  rows,
);
if (process.argv.includes('--verbose')) for (const line of childLogs) console.log(line);
printTargets('delivery', targets);
process.exit(0);
