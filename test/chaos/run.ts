// npm run chaos [-- --minutes N] [--seed S]: a bounded soak with faults against `npm run cluster`
// (started here when it is not running; same CLUSTER_* variables). Steady load through HAProxy
// (posts with mentions and hashtags, replies, favourites, boosts, deletes, unfollow/follow churn)
// from several client loops, every user on its user stream over WebSocket, and meanwhile, at
// seeded random times, one fault of each kind: kill -9 of a role process (restarted after 5 s, as
// an orchestrator would), kill -9 of a Kafka broker (restarted after 20 s), kill -9 of a Redis
// primary (its replica takes over; the old one rejoins as a replica), a restart of the
// MongoDB-wire server, and HAProxy taking an API process out of rotation for 15 s. At the end,
// after the consumers drained, the invariants are checked and a table printed; exit 1 on any violation.
// Besides: direct messages, media posts, two users on SSE streams as well, and a local peer (an
// HTTP server with three actors) that follows local users, sends signed Creates with mentions and
// Likes (some twice, as a retrying server does) and receives the deliveries. Every role's liveness
// check is probed as Kubernetes would (every 10 s; three failures in a row restart the process).
import { join } from 'node:path';
import { loadConfig, loadEnvironment } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createLogger } from '../../services/core/logger.ts';
import { clusterServerEnv, clusterSettings, type ClusterSettings } from '../../deploy/local/cluster/topology.ts';
import { startCluster } from '../../deploy/local/cluster/cluster.ts';
import { consumerLag } from '../../deploy/local/cluster/kafka.ts';
import { haproxyCommand } from '../../deploy/local/cluster/haproxy.ts';
import { isRunning, readPidFile, stopProcess } from '../../deploy/local/processes.ts';
import { redisClusterNodesEnv, redisClusterStatus } from '../../deploy/local/redisCluster.ts';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { generateActorKeyPair } from '../../services/core/accounts/keys.ts';
import { signRequest } from '../../services/core/activitypub/httpSignatures.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { startInboxSink } from '../support/inboxSink.ts';
import { createRemoteAccount, keysFrom } from '../support/remoteAccounts.ts';
import { png } from '../support/mediaFiles.ts';
import { FEED_MAX_ITEMS, feedKey } from '../../services/core/feeds/feeds.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const minutes = arg('minutes', 10);
const seed = arg('seed', Math.floor(Math.random() * 2 ** 31));
const USERS = 16;
const CLIENTS = 4;
/** A client waits as long as HAProxy waits for a server (`timeout server`): a slow answer is not a lost one. */
const CLIENT_TIMEOUT_MS = 60_000;

/** mulberry32: the run's faults and operations follow from the printed seed. */
function prng(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (m: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${m}`);

interface Posted {
  id: string;
  /** The status's ActivityPub id (top-level posts only): what the peer Likes and receives. */
  uri?: string;
  media?: boolean;
  author: number;
  at: number;
  reply: boolean;
  boost: boolean;
  deleted: boolean;
  /** A delete whose answer never came (refused, timed out, 5xx): either outcome is right. */
  uncertain?: boolean;
  /** What a boost boosts: deleting that deletes the boost too (as Mastodon does). */
  of?: Posted;
}
interface Fault {
  kind: string;
  target: string;
  start: number;
  end: number;
  failed: number;
  recoverySeconds: number;
}

const root = join(import.meta.dirname, '..', '..');
const s: ClusterSettings = clusterSettings(root, loadEnvironment(join(root, '.env')));
const base = `http://127.0.0.1:${s.publicPort}`;

/** `sent` and `at` (answered or given up): a request in flight during a fault is that fault's cost. */
const requests: Array<{ sent: number; at: number; status: number; op: string }> = [];
async function call(op: string, method: string, path: string, token: string, body?: unknown) {
  const sent = Date.now();
  let status: number;
  let json: unknown = null;
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    status = res.status;
    const text = await res.text();
    json = text ? (JSON.parse(text) as unknown) : null;
  } catch {
    status = 0; // refused or timed out
  }
  if (op) requests.push({ sent, at: Date.now(), status, op });
  return { status, body: json as Record<string, unknown> & Array<Record<string, unknown>> };
}

/** POST /api/v2/media with a small PNG: the attachment's id, or null. */
async function upload(token: string, image: Buffer): Promise<string | null> {
  const sent = Date.now();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'chaos.png');
  let status: number;
  let id: string | null = null;
  try {
    const res = await fetch(`${base}/api/v2/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    status = res.status;
    const body = (await res.json().catch(() => null)) as { id?: string } | null;
    if (res.ok && body?.id) id = String(body.id);
  } catch {
    status = 0;
  }
  requests.push({ sent, at: Date.now(), status, op: 'media upload' });
  return id;
}

function pidOf(name: string): number | null {
  const started = readPidFile(s.runDir, name);
  return started && isRunning(started) ? started.pid : null;
}

async function main(): Promise<void> {
  say(`seed ${seed}, ${minutes} minute(s); cluster on ${base}`);
  // The local peer answers on plain http at 127.0.0.1 (startCluster passes this environment on).
  process.env.FEDERATION_ALLOW_HTTP = 'true';
  process.env.ALLOWED_PRIVATE_ADDRESSES = '127.0.0.1/32';
  await startCluster(s, say);
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...clusterServerEnv(s, { REDIS_CLUSTER_NODES: redisClusterNodesEnv(s.redisPorts, s.host) }),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  const config = loadConfig(env);
  const logger = createLogger('warn', 'chaos');
  const core = await createCore(config, { sink: await createKafkaEventSink(config, logger), logger });
  const users: TestUser[] = [];
  for (let i = 0; i < USERS; i++) users.push(await createTestUser(core));
  const id = (u: number) => String(users[u].account._id);
  const name = (u: number) => users[u].account.username;

  // A stable follow graph (never undone) for the home-feed invariant, and churn pairs besides.
  const stable = new Set<string>();
  for (let a = 0; a < USERS; a++)
    for (const d of [1, 2, 3]) {
      const b = (a + d) % USERS;
      const r = await call('', 'POST', `/api/v1/accounts/${id(b)}/follow`, users[a].token);
      if (r.status !== 200) throw new Error(`setup follow: ${r.status}`);
      stable.add(`${a}>${b}`);
    }
  const churn = Array.from({ length: USERS }, (_, a) => [a, (a + USERS / 2) % USERS] as const);

  // Every user on its user stream, reconnecting as a client would.
  const seen: Array<Set<string>> = users.map(() => new Set());
  let reconnects = 0;
  let running = true;
  const sockets: WebSocket[] = [];
  const openStream = (u: number) => {
    const ws = new WebSocket(`ws://127.0.0.1:${s.publicPort}/api/v1/streaming?stream=user`, [users[u].token]);
    sockets[u] = ws;
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { event?: string; payload?: string };
      if (m.event === 'update') seen[u].add((JSON.parse(m.payload ?? '{}') as { id: string }).id);
    });
    ws.addEventListener('close', () => {
      if (!running) return;
      reconnects++;
      setTimeout(() => openStream(u), 1000);
    });
  };
  users.forEach((_, u) => openStream(u));

  // Two users on SSE too (GET /api/v1/streaming/user), reconnecting after an end or an error.
  const SSE_USERS = [0, 1];
  const seenSse: Array<Set<string>> = SSE_USERS.map(() => new Set());
  const sseAborts: AbortController[] = [];
  const openSse = async (k: number) => {
    while (running) {
      const abort = new AbortController();
      sseAborts[k] = abort;
      try {
        const res = await fetch(`${base}/api/v1/streaming/user`, {
          headers: { authorization: `Bearer ${users[SSE_USERS[k]].token}`, accept: 'text/event-stream' },
          signal: abort.signal,
        });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(frame)?.[1];
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (event === 'update' && data) seenSse[k].add((JSON.parse(data) as { id: string }).id);
          }
        }
      } catch {
        // refused, reset or aborted: reconnect below
      }
      if (running) {
        reconnects++;
        await sleep(1000);
      }
    }
  };
  const sseLoops = SSE_USERS.map((_, k) => openSse(k));

  // The local peer: three actors whose keys we hold, following users 0..2, receiving deliveries.
  // The peer keeps the keys it has verified, as a server keeps the actors it fetched: its own
  // lookups (in MongoDB, through this process) must not fail its inbox while MongoDB restarts,
  // which would back the peer's host off (the 500 is retried) and keep deliveries waiting.
  const lookup = keysFrom(core);
  const keys = new Map<string, NonNullable<Awaited<ReturnType<typeof lookup>>>>();
  const peer = await startInboxSink(async (keyId) => {
    const known = keys.get(keyId) ?? (await lookup(keyId));
    if (known) keys.set(keyId, known);
    return known;
  });
  const remotes: Array<{ uri: string; id: string; key: { keyId: string; privateKey: KeyObject } }> = [];
  for (let i = 0; i < 3; i++) {
    const keys = await generateActorKeyPair();
    const doc = await createRemoteAccount(core, peer.url, `peer${i}`, {
      // A domain of this run's own: the cluster keeps earlier runs' accounts.
      domain: `peer${i}-${Date.now().toString(36)}.chaos.example`,
    });
    await collection(core.db, accounts).updateOne({ _id: doc._id }, { $set: { publicKeyPem: keys.publicKeyPem } });
    remotes.push({
      uri: doc.uri,
      id: String(doc._id),
      key: { keyId: `${doc.uri}#main-key`, privateKey: createPrivateKey(keys.privateKeyPem) },
    });
  }
  let activitySeq = 0;
  const inbound = async (op: string, r: (typeof remotes)[number], activity: Record<string, unknown>) => {
    const body = JSON.stringify({ '@context': 'https://www.w3.org/ns/activitystreams', ...activity });
    const inbox = `${base}/inbox`;
    const headers = signRequest({
      method: 'POST',
      url: inbox,
      headers: { 'content-type': 'application/activity+json' },
      body,
      key: r.key,
    });
    delete headers.host;
    const sent = Date.now();
    let status: number;
    try {
      const res = await fetch(inbox, { method: 'POST', headers, body, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    requests.push({ sent, at: Date.now(), status, op });
    return status;
  };
  const PEER_FOLLOWED = [0, 1, 2];
  for (const [i, r] of remotes.entries()) {
    const target = users[PEER_FOLLOWED[i]].account.uri;
    const st = await inbound('inbound follow', r, {
      id: `${r.uri}#follows/${activitySeq++}`,
      type: 'Follow',
      actor: r.uri,
      object: target,
    });
    if (st !== 202 && st !== 200) throw new Error(`setup: inbound Follow answered ${st}`);
  }
  const accepted = Date.now() + 120_000;
  while (peer.received.filter((x) => x.body.type === 'Accept').length < remotes.length) {
    if (Date.now() > accepted) throw new Error('setup: the peer got no Accept for its Follows within 2 minutes');
    await sleep(500);
  }
  const image = await png(16, 16);
  await sleep(3000);

  const posts: Posted[] = [];
  const favourites: Array<{ by: number; status: Posted }> = [];
  let tag = 0;
  const loadStart = Date.now();
  const deadline = loadStart + minutes * 60_000;

  const AS_PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
  const dms: Array<{ id: string; author: number; to: number }> = [];
  const inboundNotes: Array<{ uri: string; to: number; from: number }> = [];
  const inboundLikes: Array<{ from: number; status: Posted }> = [];
  /** Direct messages, media posts, and the peer's Creates and Likes: a fifth of the operations. */
  async function otherOp(u: number, live: Posted[]): Promise<void> {
    const k = random();
    if (k < 0.25) {
      const to = (u + 1 + Math.floor(random() * (USERS - 1))) % USERS;
      const res = await call('direct message', 'POST', '/api/v1/statuses', users[u].token, {
        status: `@${name(to)} dm ${tag++}`,
        visibility: 'direct',
      });
      if (res.status === 200) dms.push({ id: String(res.body.id), author: u, to });
    } else if (k < 0.5) {
      const mediaId = await upload(users[u].token, image);
      if (!mediaId) return;
      const res = await call('media post', 'POST', '/api/v1/statuses', users[u].token, {
        status: `media ${tag++}`,
        media_ids: [mediaId],
      });
      if (res.status === 200)
        posts.push({
          id: String(res.body.id),
          uri: String(res.body.uri),
          media: true,
          author: u,
          at: Date.now(),
          reply: false,
          boost: false,
          deleted: false,
        });
    } else if (k < 0.75) {
      const from = Math.floor(random() * remotes.length);
      const r = remotes[from];
      const noteId = `${r.uri}/statuses/chaos-${activitySeq++}`;
      const to = users[u].account;
      const note = {
        id: noteId,
        type: 'Note',
        attributedTo: r.uri,
        content: `<p>hello @${to.username}</p>`,
        published: new Date().toISOString(),
        to: [AS_PUBLIC],
        cc: [to.uri],
        tag: [{ type: 'Mention', href: to.uri, name: `@${to.username}` }],
      };
      const st = await inbound('inbound create', r, {
        id: `${noteId}/activity`,
        type: 'Create',
        actor: r.uri,
        to: [AS_PUBLIC],
        cc: [to.uri],
        object: note,
      });
      if (st === 202 || st === 200) inboundNotes.push({ uri: noteId, to: u, from });
    } else {
      const from = Math.floor(random() * remotes.length);
      const target = pick(live.filter((p) => p.uri));
      if (!target || inboundLikes.some((l) => l.from === from && l.status === target)) return;
      const like = { id: `${remotes[from].uri}#likes/${activitySeq++}`, type: 'Like', actor: remotes[from].uri };
      const st = await inbound('inbound like', remotes[from], { ...like, object: target.uri });
      // A retrying server sends the same activity again: one favourite all the same.
      if (random() < 0.3) await inbound('inbound like', remotes[from], { ...like, object: target.uri });
      if (st === 202 || st === 200) inboundLikes.push({ from, status: target });
    }
  }

  async function client(): Promise<void> {
    while (Date.now() < deadline) {
      const u = Math.floor(random() * USERS);
      const live = posts.filter((p) => !p.deleted && !p.boost);
      if (random() < 0.2 && live.length >= 5) {
        await otherOp(u, live);
        await sleep(100 + random() * 200);
        continue;
      }
      const r = random();
      if (r < 0.45 || live.length < 5) {
        const other = (u + 1 + Math.floor(random() * (USERS - 1))) % USERS;
        const res = await call('post', 'POST', '/api/v1/statuses', users[u].token, {
          status: `chaos ${tag++} @${name(other)} #chaos${tag % 5}`,
        });
        if (res.status === 200)
          posts.push({
            id: String(res.body.id),
            uri: String(res.body.uri),
            author: u,
            at: Date.now(),
            reply: false,
            boost: false,
            deleted: false,
          });
      } else if (r < 0.6) {
        const to = pick(live);
        const res = await call('reply', 'POST', '/api/v1/statuses', users[u].token, {
          status: `@${name(to.author)} reply ${tag++}`,
          in_reply_to_id: to.id,
        });
        if (res.status === 200)
          posts.push({ id: String(res.body.id), author: u, at: Date.now(), reply: true, boost: false, deleted: false });
      } else if (r < 0.75) {
        const to = pick(live);
        if (to.author !== u && !favourites.some((f) => f.by === u && f.status === to)) {
          const res = await call('favourite', 'POST', `/api/v1/statuses/${to.id}/favourite`, users[u].token);
          if (res.status === 200) favourites.push({ by: u, status: to });
        }
      } else if (r < 0.85) {
        const to = pick(live);
        if (to.author !== u) {
          const res = await call('boost', 'POST', `/api/v1/statuses/${to.id}/reblog`, users[u].token);
          if (res.status === 200)
            posts.push({
              id: String(res.body.id),
              author: u,
              at: Date.now(),
              reply: false,
              boost: true,
              deleted: false,
              of: to,
            });
        }
      } else if (r < 0.9) {
        const mine = live.filter((p) => p.author === u);
        if (mine.length > 3) {
          const victim = pick(mine);
          const res = await call('delete', 'DELETE', `/api/v1/statuses/${victim.id}`, users[u].token);
          if (res.status === 200) victim.deleted = true;
          else if (res.status === 0 || res.status >= 500) victim.uncertain = true;
        }
      } else {
        const [a, b] = pick(churn);
        await call('unfollow', 'POST', `/api/v1/accounts/${id(b)}/unfollow`, users[a].token);
        await call('follow', 'POST', `/api/v1/accounts/${id(b)}/follow`, users[a].token);
      }
      await sleep(100 + random() * 200);
    }
  }

  // One fault of each kind, in a seeded order, spread over the run; recovery waits until the
  // cluster is whole again (startCluster starts what is missing and waits for every health check).
  const faults: Fault[] = [];
  // Starts whatever is missing and waits for every check; a process restarted while a dependency
  // is still coming back may exit during start-up, so this tries again for up to five minutes.
  async function makeWhole(): Promise<void> {
    const until = Date.now() + 300_000;
    for (;;) {
      try {
        return await startCluster(s, () => undefined);
      } catch (err) {
        if (Date.now() > until) throw err;
        say(`not whole yet (${(err instanceof Error ? err.message : String(err)).split('\n')[0]}); trying again`);
        await sleep(5000);
      }
    }
  }
  let faultActive = false;
  async function inject(kind: string): Promise<void> {
    faultActive = true;
    const start = Date.now();
    const before = requests.filter((q) => q.status === 0 || q.status >= 500).length;
    let target: string;
    if (kind === 'role process') {
      const p = pick(s.processes);
      target = p.name;
      const pid = pidOf(p.name);
      if (pid) process.kill(pid, 'SIGKILL');
      await sleep(5000);
    } else if (kind === 'Kafka broker') {
      const k = pick(s.kafka);
      target = `kafka-${k.id}`;
      const pid = pidOf(target);
      if (pid) process.kill(pid, 'SIGKILL');
      await sleep(20_000);
    } else if (kind === 'Redis primary') {
      const status = await redisClusterStatus(join(s.dir, 'redis'), s.redisPorts, s.host);
      const primary = pick(status.nodes.filter((n) => n.role === 'master' && n.pid));
      target = `redis ${primary.port}`;
      if (primary.pid) process.kill(primary.pid, 'SIGKILL');
      await sleep(15_000);
    } else if (kind === 'MongoDB-wire restart') {
      target = 'mongo';
      const pid = pidOf('mongo');
      if (pid) await stopProcess(pid);
    } else {
      const p = pick(s.processes.filter((x) => x.role.kind === 'api'));
      target = p.name;
      await haproxyCommand(s, `disable server api/${p.name}`);
      await sleep(15_000);
      await haproxyCommand(s, `enable server api/${p.name}`);
    }
    const recovering = Date.now();
    await makeWhole();
    faultActive = false;
    const end = Date.now();
    const failed = requests.filter((q) => q.status === 0 || q.status >= 500).length - before;
    faults.push({ kind, target, start, end, failed, recoverySeconds: (end - recovering) / 1000 });
    say(
      `fault ${kind} (${target}): ${failed} requests failed, whole again ${((end - start) / 1000).toFixed(0)} s after`,
    );
  }
  const kinds = ['role process', 'Kafka broker', 'Redis primary', 'MongoDB-wire restart', 'HAProxy drain'];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const faultDriver = (async () => {
    const slot = (minutes * 60_000) / (kinds.length + 1);
    for (const [i, kind] of kinds.entries()) {
      const at = loadStart + slot * (i + 0.5 + random() * 0.5);
      await sleep(Math.max(0, at - Date.now()));
      say(`injecting: ${kind}`);
      await inject(kind);
    }
  })();
  // Liveness as Kubernetes probes it (deploy/k8s: every 20 s there, failureThreshold 3): a process
  // whose liveness check fails three times in a row is killed and started again.
  let loadRunning = true;
  const livenessRestarts: string[] = [];
  const supervisor = (async () => {
    const failures = new Map<string, number>();
    while (loadRunning) {
      await sleep(10_000);
      for (const p of s.processes) {
        // Not while a fault is injected and recovered (that recovery restarts what it broke), nor
        // for a process that is not running.
        if (faultActive) failures.clear();
        if (!loadRunning || faultActive || !pidOf(p.name)) continue;
        const path = p.role.kind === 'streaming' ? p.healthPath : '/health';
        const live = await fetch(`http://${s.host}:${p.port}${path}`, { signal: AbortSignal.timeout(10_000) }).then(
          (r) => r.ok,
          () => false,
        );
        const n = live ? 0 : (failures.get(p.name) ?? 0) + 1;
        failures.set(p.name, n);
        if (n < 3) continue;
        failures.set(p.name, 0);
        say(`liveness: ${p.name} failed three checks in a row; restarting it`);
        livenessRestarts.push(p.name);
        const pid = pidOf(p.name);
        if (pid) process.kill(pid, 'SIGKILL');
        await makeWhole();
      }
    }
  })();
  await Promise.all([...Array.from({ length: CLIENTS }, client), faultDriver]);
  loadRunning = false;
  await supervisor;
  say('load finished; waiting for the consumers to drain');

  // Lag back to 0.
  const drainStart = Date.now();
  let lag: Map<string, number>;
  let lagging: Map<string, string[]>;
  for (;;) {
    lagging = new Map();
    lag = await consumerLag(s, config.kafkaTopicPrefix, lagging).catch(() => new Map<string, number>([['?', 1]]));
    if ([...lag.values()].every((v) => v === 0) || Date.now() - drainStart > 180_000) break;
    await sleep(2000);
  }
  const drainSeconds = (Date.now() - drainStart) / 1000;
  await sleep(3000); // pub/sub messages of the last events reach the sockets
  running = false;
  for (const ws of sockets) ws.close();
  for (const a of sseAborts) a.abort();
  await Promise.all(sseLoops);
  await peer.close();

  // Invariants.
  const violations: string[] = [];
  const inFault = (q: { sent: number; at: number }) => faults.some((f) => q.at >= f.start && q.sent <= f.end + 5000);
  // Originals first: whether a boost must still exist follows from its original.
  for (const p of [...posts.filter((q) => !q.boost), ...posts.filter((q) => q.boost)]) {
    if (p.of?.deleted) p.deleted = true;
    const res = await call('', 'GET', `/api/v1/statuses/${p.id}`, users[p.author].token);
    if (p.uncertain && (res.status === 200 || res.status === 404)) {
      p.deleted = res.status === 404;
      continue;
    }
    if (p.deleted ? res.status !== 404 : res.status !== 200)
      violations.push(`status ${p.id} (${p.deleted ? 'deleted' : 'kept'}) answers ${res.status}`);
  }
  const homes = new Map<number, Set<string>>();
  const home = async (u: number) => {
    if (!homes.has(u)) {
      const ids = new Set<string>();
      let max = '';
      for (let page = 0; page < 40; page++) {
        const res = await call(
          '',
          'GET',
          `/api/v1/timelines/home?limit=40${max ? `&max_id=${max}` : ''}`,
          users[u].token,
        );
        if (res.status !== 200 || res.body.length === 0) break;
        for (const st of res.body) ids.add(String(st.id));
        max = String(res.body[res.body.length - 1].id);
      }
      homes.set(u, ids);
    }
    return homes.get(u) as Set<string>;
  };
  // A home feed keeps its newest FEED_MAX_ITEMS entries (Mastodon's FeedManager::MAX_ITEMS): what a
  // full feed trimmed is older than its oldest entry, and the home timeline never showed it.
  const keptSince = new Map<number, bigint>();
  const oldestKept = async (u: number) => {
    if (!keptSince.has(u)) {
      const key = feedKey('home', id(u));
      const [size, oldest] = await Promise.all([core.redis.zcard(key), core.redis.zrange(key, 0, 0)]);
      keptSince.set(u, size >= FEED_MAX_ITEMS && oldest[0] ? BigInt(oldest[0]) : 0n);
    }
    return keptSince.get(u) as bigint;
  };
  let expectedLive = 0;
  let seenLive = 0;
  let trimmed = 0;
  for (const edge of stable) {
    const [a, b] = edge.split('>').map(Number);
    for (const p of posts.filter((q) => q.author === b && !q.deleted && !q.reply && !q.boost)) {
      expectedLive++;
      if (seen[a].has(p.id)) seenLive++;
      if ((await home(a)).has(p.id)) continue;
      if (BigInt(p.id) < (await oldestKept(a))) trimmed++;
      else violations.push(`home of user ${a} lacks post ${p.id} of followed user ${b}`);
    }
  }
  for (const f of favourites.filter((x) => !x.status.deleted)) {
    const res = await call(
      '',
      'GET',
      `/api/v1/notifications?types[]=favourite&account_id=${id(f.by)}&limit=80`,
      users[f.status.author].token,
    );
    const n = (res.body ?? []).filter((x) => (x.status as { id?: string } | null)?.id === f.status.id).length;
    if (n !== 1) violations.push(`favourite of ${f.status.id} by user ${f.by}: ${n} notifications`);
  }
  for (let u = 0; u < USERS; u++) {
    const acct = await call('', 'GET', `/api/v1/accounts/${id(u)}`, users[u].token);
    const followers = await call('', 'GET', `/api/v1/accounts/${id(u)}/followers?limit=80`, users[u].token);
    if (acct.body.followers_count !== followers.body.length)
      violations.push(
        `user ${u}: followers_count ${String(acct.body.followers_count)}, recount ${followers.body.length}`,
      );
    // Recount from the account's statuses (a post whose answer was lost may exist all the same).
    let listed = 0;
    let max = '';
    for (let page = 0; page < 40; page++) {
      const q = `/api/v1/accounts/${id(u)}/statuses?limit=40${max ? `&max_id=${max}` : ''}`;
      const res = await call('', 'GET', q, users[u].token);
      if (res.status !== 200 || res.body.length === 0) break;
      // As Mastodon, statuses_count leaves out direct messages; the author's own listing shows them.
      listed += res.body.filter((st) => st.visibility !== 'direct').length;
      max = String(res.body[res.body.length - 1].id);
    }
    if (acct.body.statuses_count !== listed)
      violations.push(`user ${u}: statuses_count ${String(acct.body.statuses_count)}, recount ${listed}`);
  }
  // Direct messages: the recipient reads it, someone else gets 404.
  for (const dm of dms) {
    const other = [...Array(USERS).keys()].find((x) => x !== dm.author && x !== dm.to) as number;
    const seenBy = await call('', 'GET', `/api/v1/statuses/${dm.id}`, users[dm.to].token);
    const hidden = await call('', 'GET', `/api/v1/statuses/${dm.id}`, users[other].token);
    if (seenBy.status !== 200) violations.push(`direct message ${dm.id}: its recipient gets ${seenBy.status}`);
    if (hidden.status !== 404) violations.push(`direct message ${dm.id}: a third user gets ${hidden.status}`);
  }
  // Media posts keep their attachment, processed (a URL to show).
  for (const p of posts.filter((q) => q.media && !q.deleted)) {
    const res = await call('', 'GET', `/api/v1/statuses/${p.id}`, users[p.author].token);
    const media = (res.body?.media_attachments ?? []) as Array<{ url?: string | null }>;
    if (res.status === 200 && (media.length !== 1 || !media[0].url))
      violations.push(`media post ${p.id}: ${media.length} attachment(s), url ${String(media[0]?.url)}`);
  }
  // The peer's Creates: one mention notification each; its Likes: one favourite each (sent twice or not).
  const notified = async (u: number, type: string, from: number) => {
    const q = `/api/v1/notifications?types[]=${type}&account_id=${remotes[from].id}&limit=80`;
    return ((await call('', 'GET', q, users[u].token)).body ?? []) as Array<{ status?: { id?: string; uri?: string } }>;
  };
  for (const n of inboundNotes) {
    const count = (await notified(n.to, 'mention', n.from)).filter((x) => x.status?.uri === n.uri).length;
    if (count !== 1) violations.push(`inbound Create ${n.uri} to user ${n.to}: ${count} mention notifications`);
  }
  for (const l of inboundLikes.filter((x) => !x.status.deleted)) {
    const count = (await notified(l.status.author, 'favourite', l.from)).filter(
      (x) => x.status?.id === l.status.id,
    ).length;
    if (count !== 1)
      violations.push(`inbound Like of ${l.status.id} by peer${l.from}: ${count} favourite notifications`);
  }
  // Deliveries: the peer follows users 0..2 and got a Create of each of their kept public posts.
  const objectId = (o: unknown) =>
    typeof o === 'object' && o !== null ? String((o as { id?: string }).id) : String(o);
  const delivered = new Set(peer.received.filter((x) => x.body.type === 'Create').map((x) => objectId(x.body.object)));
  let deliveriesExpected = 0;
  for (const p of posts.filter((q) => PEER_FOLLOWED.includes(q.author) && q.uri && !q.deleted && !q.uncertain)) {
    deliveriesExpected++;
    if (!delivered.has(p.uri!)) violations.push(`the peer never received the Create of ${p.uri}`);
  }
  let sseExpected = 0;
  let sseSeen = 0;
  for (const [k, a] of SSE_USERS.entries())
    for (const edge of stable) {
      const [from, b] = edge.split('>').map(Number);
      if (from !== a) continue;
      for (const p of posts.filter((q) => q.author === b && !q.deleted && !q.reply && !q.boost)) {
        sseExpected++;
        if (seenSse[k].has(p.id)) sseSeen++;
      }
    }
  const outside5xx = requests.filter((q) => (q.status >= 500 || q.status === 0) && !inFault(q));
  const clock = (t: number) => new Date(t).toISOString().slice(11, 19);
  for (const q of outside5xx)
    violations.push(
      `${q.op} sent ${clock(q.sent)} ${q.status ? `answered ${q.status}` : 'got no answer'} at ${clock(q.at)}, outside a fault window`,
    );
  const lagLeft = [...lag].filter(([, v]) => v > 0);
  for (const [g, v] of lagLeft)
    violations.push(`consumer group ${g} still lags ${v} (${(lagging.get(g) ?? []).join(', ')})`);
  await core.close();

  // Tables.
  const ops = new Map<string, { ok: number; failed: number; lost: number; other: number }>();
  for (const q of requests) {
    const o = ops.get(q.op) ?? { ok: 0, failed: 0, lost: 0, other: 0 };
    if (q.status >= 200 && q.status < 300) o.ok++;
    else if (q.status === 0) o.lost++;
    else if (q.status >= 500) o.failed++;
    else o.other++;
    ops.set(q.op, o);
  }
  console.log(`\nchaos run: seed ${seed}, ${minutes} min, ${USERS} users, ${CLIENTS} client loops`);
  console.log('| operation | 2xx | 5xx | refused or timed out | 4xx |\n|---|---|---|---|---|');
  for (const [op, o] of ops) console.log(`| ${op} | ${o.ok} | ${o.failed} | ${o.lost} | ${o.other} |`);
  console.log('\n| fault | target | requests failed | time to whole again (s) |\n|---|---|---|---|');
  for (const f of faults)
    console.log(`| ${f.kind} | ${f.target} | ${f.failed} | ${((f.end - f.start) / 1000).toFixed(0)} |`);
  console.log(
    `\nconsumers drained in ${drainSeconds.toFixed(0)} s; user-stream posts seen live ${seenLive}/${expectedLive} (the rest read from the home timeline, ${trimmed} older than a full home feed's oldest entry); stream reconnects ${reconnects}`,
  );
  console.log(
    `SSE posts seen live ${sseSeen}/${sseExpected}; peer: ${inboundNotes.length} Creates and ${inboundLikes.length} Likes accepted, ${deliveriesExpected} Creates expected and received; direct messages ${dms.length}; liveness restarts ${livenessRestarts.length}${livenessRestarts.length ? ` (${livenessRestarts.join(', ')})` : ''}`,
  );
  console.log(`violations: ${violations.length}`);
  for (const v of violations.slice(0, 50)) console.log(`  ${v}`);
  process.exit(violations.length === 0 ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(`[chaos] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
