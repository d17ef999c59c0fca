// `npm run bench -- inbox [--activities=6000] [--actors=200] [--servers=20] [--concurrency=32]
// [--duplicates=0.05]`: federation ingest. Signed activities from `actors` remote actors on
// `servers` servers, a realistic mix (Create of Notes with mentions and hashtags, Announce, Like,
// Update, Delete, Follow, Undo of Like/Announce/Follow), some delivered twice (a sender's retry):
//   (a) POSTed to the shared inbox of one API process (`services/main.ts api`, signature
//       verification with the actors' keys known), counting 202s per second;
//   (b) then stored by one ingress process (`services/main.ts pipeline ingress`), counting
//       activities handled per second (committed consumer offsets) until its lag is 0;
// and checks that nothing was lost or applied twice (statuses, edits, deletes, reblogs,
// favourites, follows and every counter against what the activities say). Each actor's
// activities are sent in order by one sender (as a server's delivery queue does), so the final
// state is known. Targets (issue 24): ≥ 1,500 accepted/s, ≥ 500 stored/s.
import { generateKeyPair, createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import { execSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { createLogger } from '../../services/core/logger.ts';
import { accounts, type AccountDoc } from '../../services/core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { favourites } from '../../services/core/model/favourites.ts';
import { follows } from '../../services/core/model/follows.ts';
import { statusEdits } from '../../services/core/model/statusEdits.ts';
import { recordFollow } from '../../services/core/graph/relations.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { signRequest } from '../../services/core/activitypub/httpSignatures.ts';
import { createRemoteStatus } from '../../services/core/activitypub/ingress/statuses.ts';
import { createTestUser } from '../support/fixtures.ts';
import { deleteTestTopics } from '../support/kafka.ts';
import { deleteRedisNamespace } from '../support/core.ts';
import {
  cpuAccount,
  pidListening,
  printTable,
  printTargets,
  processCpuSeconds,
  random,
  startRole,
  stopRole,
} from './lib.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(option('activities') ?? 6_000);
const ACTORS = Number(option('actors') ?? 200);
const SERVERS = Number(option('servers') ?? 20);
const CONCURRENCY = Number(option('concurrency') ?? 32);
const DUPLICATES = Number(option('duplicates') ?? 0.05);
const LOCAL_USERS = 20;
const TAGS = Array.from({ length: 30 }, (_, i) => `benchtag${i}`);
const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

const name = `bench_inbox_${randomBytes(4).toString('hex')}`;
const mongo = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
mongo.pathname = `/${name}`;
const env = {
  MONGO_URL: mongo.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
  KAFKA_PARTITIONS: '8',
  LOCAL_DOMAIN: 'bench.local',
};
const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
const logger = createLogger('warn', 'bench');
const sink = await createKafkaEventSink(config, logger);
const core = await createCore(config, { sink, logger });
const children: ChildProcess[] = [];
const rand = random(24);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

/** Busy CPU seconds of the whole machine so far (/proc/stat). */
async function machineBusy(): Promise<number> {
  const [user, nice, system, , , irq, softirq, steal] = (await readFile('/proc/stat', 'utf8'))
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

interface Actor {
  account: AccountDoc;
  key: { keyId: string; privateKey: KeyObject };
  notes: string[]; // live notes it created in this run
  counter: number;
}

try {
  // ---- Data: local users with statuses, remote actors (known, with keys), follows both ways ----
  const locals = await Promise.all(
    Array.from({ length: LOCAL_USERS }, (_, i) => createTestUser(core, { username: `local${i}` })),
  );
  const localStatuses = (
    await Promise.all(
      locals.map((u) => Promise.all([0, 1, 2].map((k) => postStatus(core, u.account, { text: `local ${k}` })))),
    )
  ).flat();
  const generate = promisify(generateKeyPair);
  const actors: Actor[] = [];
  console.log(`  ${LOCAL_USERS} local users, ${localStatuses.length} statuses; generating ${ACTORS} actor keys`);
  for (let i = 0; i < ACTORS; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, ACTORS - i) }, () =>
        generate('rsa', {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        }),
      ),
    );
    batch.forEach((keys, k) => {
      const n = i + k;
      const host = `s${String(n % SERVERS).padStart(2, '0')}.bench.example`;
      const uri = `https://${host}/users/u${n}`;
      const account: AccountDoc = {
        ...locals[0]!.account,
        _id: 900_000_000n + BigInt(n),
        username: `u${n}`,
        usernameLower: `u${n}`,
        displayName: `Remote ${n}`,
        displayNameLower: `remote ${n}`,
        domain: host,
        uri,
        url: `https://${host}/@u${n}`,
        inboxUrl: `${uri}/inbox`,
        outboxUrl: `${uri}/outbox`,
        sharedInboxUrl: `https://${host}/inbox`,
        followersUrl: `${uri}/followers`,
        followingUrl: `${uri}/following`,
        featuredUrl: null,
        featuredTagsUrl: null,
        publicKeyPem: keys.publicKey,
        privateKeyPem: null,
        keyId: `${uri}#main-key`,
        followersCount: 0,
        followingCount: 0,
        statusesCount: 0,
        lastStatusAt: null,
        lastFetchedAt: new Date(),
        createdAt: new Date(Date.now() - 86_400_000),
      };
      actors.push({
        account,
        key: { keyId: account.keyId!, privateKey: createPrivateKey(keys.privateKey) },
        notes: [],
        counter: 0,
      });
    });
  }
  await collection(core.db, accounts).insertMany(actors.map((a) => a.account));
  // Every actor has a local follower (its posts are wanted here).
  await Promise.all(actors.map((a, i) => recordFollow(core, locals[i % LOCAL_USERS]!.account._id, a.account._id)));
  // Remote statuses known before the run, for Announces of other servers' posts.
  const seeded = (
    await Promise.all(
      actors
        .filter((_, i) => i % 2 === 0)
        .map((a) =>
          createRemoteStatus(
            core,
            a.account,
            {
              id: `${a.account.uri}/statuses/seed`,
              type: 'Note',
              attributedTo: a.account.uri,
              content: '<p>seed</p>',
              to: [PUBLIC],
            },
            { requested: true },
          ),
        ),
    )
  ).filter((s): s is StatusDoc => s !== null);

  console.log(`  ${ACTORS} remote actors stored, ${seeded.length} remote statuses seeded`);
  // ---- The activities, and the state they must leave ----
  const expected = {
    creates: 0,
    deletes: 0,
    updated: new Set<string>(),
    updates: 0,
    likes: new Set<string>(), // `${actorIdx}|${statusIdx}`
    announces: new Set<string>(), // `${actorIdx}|${target uri}`
    followsIn: new Set<string>(), // `${actorIdx}|${localIdx}`
  };
  const perActor: Array<Array<{ type: string; body: string }>> = actors.map(() => []);
  const mix: Array<[string, number]> = [
    ['Create', 0.42],
    ['Like', 0.16],
    ['Announce', 0.12],
    ['Update', 0.08],
    ['Delete', 0.05],
    ['Follow', 0.06],
    ['Undo', 0.11],
  ];
  const chooseType = () => {
    let r = rand();
    for (const [t, p] of mix) if ((r -= p) < 0) return t;
    return 'Create';
  };
  const published = Date.now() - 3_600_000;
  // The id of each live boost's Announce: an Undo embeds the Announce it undoes, as servers do.
  const announceIds = new Map<string, string>();
  let made = 0;
  while (made < N) {
    const ai = Math.floor(rand() * ACTORS);
    const a = actors[ai]!;
    const uri = a.account.uri;
    const base = { '@context': 'https://www.w3.org/ns/activitystreams', actor: uri };
    const next = `${uri}/activities/${a.counter++}`;
    let activity: Record<string, unknown> | null = null;
    const type = chooseType();
    if (type === 'Create' || (type !== 'Follow' && type !== 'Like' && type !== 'Announce' && a.notes.length === 0)) {
      const note = `${uri}/statuses/${a.counter}`;
      const mentioned = [pick(locals).account, actors[Math.floor(rand() * ACTORS)]!.account];
      const tags = [pick(TAGS), pick(TAGS)];
      activity = {
        ...base,
        id: `${note}/activity`,
        type: 'Create',
        to: [PUBLIC],
        cc: [`${uri}/followers`],
        object: {
          id: note,
          type: 'Note',
          attributedTo: uri,
          published: new Date(published + a.counter * 1000).toISOString(),
          content: `<p>note ${a.counter} ${mentioned.map((m) => `@${m.username}`).join(' ')} ${tags.map((t) => `#${t}`).join(' ')}</p>`,
          to: [PUBLIC],
          cc: [`${uri}/followers`, ...mentioned.map((m) => m.uri)],
          tag: [
            ...mentioned.map((m) => ({ type: 'Mention', href: m.uri, name: `@${m.username}` })),
            ...tags.map((t) => ({ type: 'Hashtag', href: `https://${a.account.domain}/tags/${t}`, name: `#${t}` })),
          ],
        },
      };
      a.notes.push(note);
      expected.creates++;
    } else if (type === 'Update') {
      const note = pick(a.notes);
      activity = {
        ...base,
        id: `${note}#updates/${a.counter}`,
        type: 'Update',
        to: [PUBLIC],
        object: {
          id: note,
          type: 'Note',
          attributedTo: uri,
          content: `<p>edited ${a.counter} #${pick(TAGS)}</p>`,
          updated: new Date(Date.now() + a.counter * 1000 - 600_000).toISOString(),
          to: [PUBLIC],
          cc: [`${uri}/followers`],
          tag: [],
        },
      };
      expected.updated.add(note);
      expected.updates++;
    } else if (type === 'Delete') {
      const note = a.notes.splice(Math.floor(rand() * a.notes.length), 1)[0]!;
      activity = {
        ...base,
        id: `${note}#delete`,
        type: 'Delete',
        to: [PUBLIC],
        object: { id: note, type: 'Tombstone' },
      };
      expected.deletes++;
    } else if (type === 'Like') {
      const si = Math.floor(rand() * localStatuses.length);
      const key = `${ai}|${si}`;
      if (expected.likes.has(key)) continue;
      activity = { ...base, id: next, type: 'Like', object: localStatuses[si]!.uri };
      expected.likes.add(key);
    } else if (type === 'Announce') {
      const target = rand() < 0.6 ? pick(localStatuses).uri! : pick(seeded).uri!;
      const key = `${ai}|${target}`;
      if (expected.announces.has(key)) continue;
      announceIds.set(key, next);
      activity = {
        ...base,
        id: next,
        type: 'Announce',
        to: [PUBLIC],
        object: target,
        published: new Date().toISOString(),
      };
      expected.announces.add(key);
    } else if (type === 'Follow') {
      const li = Math.floor(rand() * LOCAL_USERS);
      const key = `${ai}|${li}`;
      if (expected.followsIn.has(key)) continue;
      activity = { ...base, id: next, type: 'Follow', object: locals[li]!.account.uri };
      expected.followsIn.add(key);
    } else {
      // Undo of one of the actor's current Likes, Announces or Follows (with the inner activity embedded).
      const mine = (set: Set<string>) => [...set].filter((k) => k.startsWith(`${ai}|`));
      const kinds = [
        ['Like', mine(expected.likes)],
        ['Announce', mine(expected.announces)],
        ['Follow', mine(expected.followsIn)],
      ].filter(([, ks]) => ks.length > 0) as Array<[string, string[]]>;
      if (kinds.length === 0) continue;
      const [kind, keys] = pick(kinds);
      const key = pick(keys);
      const rest = key.slice(key.indexOf('|') + 1);
      const object =
        kind === 'Like'
          ? localStatuses[Number(rest)]!.uri
          : kind === 'Follow'
            ? locals[Number(rest)]!.account.uri
            : rest;
      activity = {
        ...base,
        id: `${next}#undo`,
        type: 'Undo',
        object: { id: kind === 'Announce' ? announceIds.get(key)! : `${next}#inner`, type: kind, actor: uri, object },
      };
      (kind === 'Like' ? expected.likes : kind === 'Announce' ? expected.announces : expected.followsIn).delete(key);
    }
    const body = JSON.stringify(activity);
    perActor[ai]!.push({ type: String(activity.type), body });
    made++;
  }

  // ---- (a) the inbox: one API process, CONCURRENCY senders, each owning some actors ----
  const api = await startRole(config, ['api'], env);
  children.push(api);
  const inbox = `http://127.0.0.1:${api.port}/inbox`;
  const lanes: Array<Array<{ body: string; headers: Record<string, string> }>> = Array.from(
    { length: CONCURRENCY },
    () => [],
  );
  let duplicates = 0;
  // Round-robin over the lane's actors, keeping each actor's order; some requests sent twice.
  for (let lane = 0; lane < CONCURRENCY; lane++) {
    const mine = perActor.map((list, ai) => ({ list, ai })).filter(({ ai }) => ai % CONCURRENCY === lane);
    const cursors = mine.map(() => 0);
    for (let left = true; left;) {
      left = false;
      mine.forEach(({ list, ai }, k) => {
        const item = list[cursors[k]!];
        if (!item) return;
        cursors[k]!++;
        left = true;
        const headers = signRequest({
          method: 'POST',
          url: inbox,
          headers: { 'content-type': 'application/activity+json' },
          body: item.body,
          key: actors[ai]!.key,
        });
        delete headers.host; // fetch sends the same Host itself
        lanes[lane]!.push({ body: item.body, headers });
        if (rand() < DUPLICATES) {
          lanes[lane]!.push({ body: item.body, headers });
          duplicates++;
        }
      });
    }
  }
  const posts = lanes.reduce((n, l) => n + l.length, 0);
  // Warm-up: the process's first requests (JIT, connections), not counted.
  for (let i = 0; i < 50; i++) {
    const res = await fetch(inbox, { method: 'POST', body: '{}' });
    await res.arrayBuffer();
  }
  const load0 = execSync('uptime').toString().trim();
  // The servers this run uses (by their ports: a shared machine runs other brokers too).
  const portOf = (url: string) => Number(new URL(url.includes('://') ? url : `tcp://${url}`).port);
  const serverPids = async (url: string) => {
    const pid = await pidListening(portOf(url));
    return pid === null ? [] : [pid];
  };
  const kafkaPids = await serverPids(config.kafkaBrokers[0]!);
  const mongoPids = await serverPids(config.mongoUrl);
  const redisPids = await serverPids(config.redisUrl);
  const inboxCpu = cpuAccount({ API: [api.pid!], Kafka: kafkaPids, 'MongoDB-wire': mongoPids, Redis: redisPids });
  const serversCpu = async () =>
    Object.fromEntries(
      await Promise.all(
        Object.entries({ Kafka: kafkaPids, 'MongoDB-wire': mongoPids, Redis: redisPids }).map(
          async ([k, pids]) =>
            [k, (await Promise.all(pids.map(processCpuSeconds))).reduce((a, b) => a + b, 0)] as const,
        ),
      ),
    ) as Record<string, number>;
  const perActivity = (before: Record<string, number>, after: Record<string, number>, n: number) =>
    Object.keys(after)
      .map((k) => `${k} ${(((after[k]! - before[k]!) * 1000) / n).toFixed(2)} ms`)
      .join(', ');
  const apiCpu0 = await processCpuSeconds(api.pid!);
  const inboxServers0 = await serversCpu();
  const loadBusy0 = await machineBusy();
  await inboxCpu.start();
  let refused = 0;
  const t0 = performance.now();
  await Promise.all(
    lanes.map(async (lane) => {
      for (const r of lane) {
        const res = await fetch(inbox, { method: 'POST', headers: r.headers, body: r.body });
        if (res.status !== 202) {
          refused++;
          if (refused < 5) console.log(`  refused: ${res.status} ${await res.text()}`);
        }
        await res.arrayBuffer().catch(() => undefined);
      }
    }),
  );
  const inboxS = (performance.now() - t0) / 1000;
  const inboxWhere = await inboxCpu.stop(inboxS);
  const apiCpuMs = ((await processCpuSeconds(api.pid!)) - apiCpu0) * 1000;
  const inboxServers = perActivity(inboxServers0, await serversCpu(), posts);
  const inboxBusy = (await machineBusy()) - loadBusy0;
  await stopRole(children.pop()!, 10_000);
  if (refused > 0) throw new Error(`${refused} of ${posts} inbox requests were not accepted`);
  const inboxRate = posts / inboxS;

  // ---- (b) ingress: one process, from its first committed batch until its lag is 0 ----
  const kafka = createKafka(config, logger, 'bench-lag');
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `${config.kafkaTopicPrefix}.ingress`;
  const topics = [topicName(config, 'inbound'), topicName(config, 'ingress.retry')];
  const positions = async () => {
    let committed = 0;
    let end = 0;
    for (const topic of topics) {
      const ends = await admin.fetchTopicOffsets(topic).catch(() => []);
      for (const p of ends) end += Number(p.high);
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] }).catch(() => [undefined]);
      for (const p of offsets?.partitions ?? []) committed += Math.max(0, Number(p.offset));
    }
    return { committed, end };
  };
  const load1 = execSync('uptime').toString().trim();
  const ingress = await startRole(config, ['pipeline', 'ingress'], env);
  children.push(ingress);
  // The end of its log, shown when it never catches up.
  let ingressLog = '';
  const keepLog = (d: Buffer) => (ingressLog = (ingressLog + d.toString()).slice(-6000));
  ingress.stdout?.on('data', keepLog);
  ingress.stderr?.on('data', keepLog);
  const ingressCpu = cpuAccount({
    ingress: [ingress.pid!],
    Kafka: kafkaPids,
    'MongoDB-wire': mongoPids,
    Redis: redisPids,
  });
  let first: { committed: number; at: number; cpu: number } | null = null;
  let ingressServers0: Record<string, number> = {};
  let ingressBusy0 = 0;
  const deadline = Date.now() + 900_000;
  let last = { committed: 0, end: 0 };
  for (;;) {
    last = await positions();
    if (!first && last.committed > 0) {
      first = { committed: last.committed, at: performance.now(), cpu: await processCpuSeconds(ingress.pid!) };
      ingressServers0 = await serversCpu();
      ingressBusy0 = await machineBusy();
      await ingressCpu.start();
    }
    if (first && last.committed >= last.end) break;
    if (Date.now() > deadline)
      throw new Error(`ingress: ${last.committed} of ${last.end} after 15 minutes; its log ends:\n${ingressLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const ingressS = (performance.now() - first!.at) / 1000;
  const handled = last.committed - first!.committed;
  const ingressWhere = await ingressCpu.stop(ingressS);
  const ingressCpuMs = ((await processCpuSeconds(ingress.pid!)) - first!.cpu) * 1000;
  const ingressServers = perActivity(ingressServers0, await serversCpu(), Math.max(handled, 1));
  const ingressBusy = (await machineBusy()) - ingressBusy0;
  const dlq = (await admin.fetchTopicOffsets(topicName(config, 'ingress.dlq')).catch(() => [])).reduce(
    (n, p) => n + Number(p.high),
    0,
  );
  await admin.disconnect();
  await stopRole(children.pop()!, 10_000);
  const ingressRate = handled / ingressS;

  // ---- Nothing lost, nothing applied twice ----
  const remoteIds = actors.map((a) => a.account._id);
  const st = collection(core.db, statuses);
  const notes = { accountId: { $in: remoteIds }, reblogOfId: null, uri: { $not: /\/seed$/ } };
  const checks: Array<[string, number, number]> = [
    ['notes stored (Create)', await st.countDocuments(notes), expected.creates],
    ['notes deleted (Delete)', await st.countDocuments({ ...notes, deletedAt: { $ne: null } }), expected.deletes],
    ['notes edited (Update)', await st.countDocuments({ ...notes, editedAt: { $ne: null } }), expected.updated.size],
    [
      'edit history entries',
      await collection(core.db, statusEdits).countDocuments({ accountId: { $in: remoteIds } }),
      expected.updated.size + expected.updates,
    ],
    [
      'reblogs live (Announce - Undo)',
      await st.countDocuments({ accountId: { $in: remoteIds }, reblogOfId: { $ne: null }, deletedAt: null }),
      expected.announces.size,
    ],
    [
      'favourites (Like - Undo)',
      await collection(core.db, favourites).countDocuments({ accountId: { $in: remoteIds } }),
      expected.likes.size,
    ],
    [
      'follows of local users (Follow - Undo)',
      await collection(core.db, follows).countDocuments({ accountId: { $in: remoteIds } }),
      expected.followsIn.size,
    ],
  ];
  const sum = async (ids: bigint[], field: 'favouritesCount' | 'reblogsCount') =>
    (await st.find({ _id: { $in: ids } }, { projection: { [field]: 1 } }).toArray()).reduce(
      (n, s) => n + Number(s[field]),
      0,
    );
  checks.push([
    'favouritesCount of local statuses',
    await sum(
      localStatuses.map((s) => s._id),
      'favouritesCount',
    ),
    expected.likes.size,
  ]);
  checks.push([
    'reblogsCount of boosted statuses',
    (await sum(
      localStatuses.map((s) => s._id),
      'reblogsCount',
    )) +
      (await sum(
        seeded.map((s) => s._id),
        'reblogsCount',
      )),
    expected.announces.size,
  ]);
  const remoteAccounts = await collection(core.db, accounts)
    .find({ _id: { $in: remoteIds } })
    .toArray();
  checks.push([
    'statusesCount of remote actors',
    remoteAccounts.reduce((n, a) => n + a.statusesCount, 0),
    seeded.length + expected.creates - expected.deletes + expected.announces.size,
  ]);
  const localAccounts = await collection(core.db, accounts)
    .find({ _id: { $in: locals.map((l) => l.account._id) } })
    .toArray();
  checks.push([
    'followersCount of local users',
    localAccounts.reduce((n, a) => n + a.followersCount, 0),
    expected.followsIn.size,
  ]);
  const wrong = checks.filter(([, got, want]) => got !== want);
  if (wrong.some(([what]) => what.startsWith('reblogs'))) {
    // Which boosts differ, and what their actors sent about those statuses (to find the cause).
    const live = await st.find({ accountId: { $in: remoteIds }, reblogOfId: { $ne: null }, deletedAt: null }).toArray();
    const originals = new Map(
      (await st.find({ _id: { $in: live.map((r) => r.reblogOfId!) } }).toArray()).map((o) => [o._id, o.uri]),
    );
    const actorIndex = new Map(actors.map((a, i) => [a.account._id, i]));
    const got = new Set(live.map((r) => `${actorIndex.get(r.accountId)}|${originals.get(r.reblogOfId!)}`));
    const diff = [
      ...[...expected.announces].filter((k) => !got.has(k)).map((k) => `missing ${k}`),
      ...[...got].filter((k) => !expected.announces.has(k)).map((k) => `extra ${k}`),
    ];
    for (const d of diff.slice(0, 5)) {
      const [ai, target] = d.split(' ')[1]!.split('|');
      console.log(`  ${d}:`);
      for (const a of perActor[Number(ai)]!)
        if (a.body.includes(target!)) console.log(`    ${a.type} ${a.body.slice(0, 300)}`);
    }
  }

  const mixCounts = new Map<string, number>();
  for (const list of perActor) for (const a of list) mixCounts.set(a.type, (mixCounts.get(a.type) ?? 0) + 1);
  printTable(
    `inbox: ${N} activities (${[...mixCounts].map(([t, n]) => `${t} ${n}`).join(', ')}) from ${ACTORS} actors on ${SERVERS} servers, ` +
      `${duplicates} delivered twice; ${CONCURRENCY} concurrent senders`,
    ['measured', 'value'],
    [
      ['load before the inbox phase', load0.replace(/^.*load average/, 'load average')],
      [
        '(a) signed POSTs accepted (202), one API process',
        `${Math.round(inboxRate)}/s (${posts} in ${inboxS.toFixed(2)} s)`,
      ],
      ['    API process CPU per accepted activity', `${(apiCpuMs / posts).toFixed(3)} ms`],
      ['    where the CPU went', inboxWhere],
      ['load before the ingress phase', load1.replace(/^.*load average/, 'load average')],
      [
        '(b) activities stored, one ingress process',
        `${Math.round(ingressRate)}/s (${handled} in ${ingressS.toFixed(2)} s)`,
      ],
      ['    ingress process CPU per activity', `${(ingressCpuMs / Math.max(handled, 1)).toFixed(2)} ms`],
      ['    where the CPU went', ingressWhere],
      ['dead-lettered', String(dlq)],
      ...checks.map(([what, got, want]) => [`check: ${what}`, got === want ? `${got} ok` : `${got}, expected ${want}`]),
    ],
  );
  // What limits each phase, measured: the process's own CPU per activity (what one process on a
  // core of its own would sustain), the servers' CPU per activity, and how much of the machine
  // other work took (a shared machine).
  const apiMs = apiCpuMs / posts;
  const ingressMs = ingressCpuMs / Math.max(handled, 1);
  console.log(
    `\ninbox: what limits (a): the API process spent ${apiMs.toFixed(3)} ms of CPU per accepted activity ` +
      `(one process on a core of its own: about ${Math.round(1000 / apiMs)}/s) and got ` +
      `${(apiCpuMs / 1000 / inboxS).toFixed(2)} of a core; servers per activity: ${inboxServers}; ` +
      `the whole machine was busy ${(inboxBusy / inboxS).toFixed(1)} cores, ` +
      `${(inboxBusy - apiCpuMs / 1000).toFixed(1)} CPU-s of it other than the API process`,
  );
  console.log(
    `inbox: what limits (b): the ingress process spent ${ingressMs.toFixed(2)} ms of CPU per stored activity ` +
      `(about ${Math.round(1000 / ingressMs)}/s on a core of its own) and got ` +
      `${(ingressCpuMs / 1000 / ingressS).toFixed(2)} of a core, waiting on round trips the rest; servers per ` +
      `activity: ${ingressServers}; the whole machine was busy ${(ingressBusy / ingressS).toFixed(1)} cores, ` +
      `${(ingressBusy - ingressCpuMs / 1000).toFixed(1)} CPU-s of it other than the ingress process`,
  );
  printTargets('inbox', [
    {
      what: 'accepted (202) per second, one API process',
      measured: `${Math.round(inboxRate)}/s`,
      target: '≥ 1,500/s',
      met: inboxRate >= 1500,
    },
    {
      what: 'stored per second, one ingress process',
      measured: `${Math.round(ingressRate)}/s`,
      target: '≥ 500/s',
      met: ingressRate >= 500,
    },
    {
      what: 'activities lost or applied twice',
      measured: wrong.length === 0 && dlq === 0 ? '0' : `${wrong.length} checks wrong, ${dlq} dead-lettered`,
      target: '0',
      met: wrong.length === 0 && dlq === 0,
    },
  ]);
} finally {
  for (const child of children) await stopRole(child);
  if (process.argv.includes('--keep')) console.log(`kept: database and topics ${name}`);
  else {
    await core.db.dropDatabase().catch(() => undefined);
    await deleteRedisNamespace(core.redis, name).catch(() => undefined);
    await deleteTestTopics(config).catch(() => undefined);
  }
  await core.close();
}
