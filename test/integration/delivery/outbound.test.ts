// Outbound federation on the real servers: actions through the API publish the real events, the
// delivery pipeline (planner + worker) turns them into signed POSTs, and a local HTTP sink playing
// two remote servers checks each signature (the project's verifier, the signer's key) and shape;
// moderation (suspension, its end, forwarded reports, deletion) federates too.
// Followers on one server get one copy through its shared inbox; direct interactions go to
// personal inboxes; every activity arrives once.
import type { Core } from '../../../services/core/context.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { createFollow } from '../../../services/core/graph/follow.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { suspendAccount, unsuspendAccount } from '../../../services/core/moderation/accountActions.ts';
import { deleteAccountData } from '../../../services/core/moderation/accountRemoval.ts';
import { createReport } from '../../../services/core/moderation/reports.ts';
import { runDeliveryPipeline } from '../../../pipelines/delivery/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { startInboxSink, type InboxSink, type ReceivedActivity } from '../../support/inboxSink.ts';
import { createRemoteAccount, createRemoteStatus, keysFrom } from '../../support/remoteAccounts.ts';
import { followerInboxesKey } from '../../../services/core/activitypub/delivery/audience.ts';

const AS_PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

let api: TestApi;
let core: Core;
let serverA: InboxSink;
let serverB: InboxSink;
let pipeline: { stop(): Promise<void> };

beforeAll(async () => {
  api = await startTestApi({ FEDERATION_ALLOW_HTTP: 'true', ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32' });
  core = api.core;
  serverA = await startInboxSink(keysFrom(core));
  serverB = await startInboxSink(keysFrom(core));
  pipeline = await runDeliveryPipeline(core, {
    settings: { partitions: 2 },
    planner: consumerTuning,
    worker: { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 },
  });
});

afterAll(async () => {
  await pipeline?.stop();
  await serverA?.close();
  await serverB?.close();
  await api?.close();
});

const all = () => [...serverA.received, ...serverB.received];
const ofType = (type: string, r: ReceivedActivity[] = all()) => r.filter((x) => x.body.type === type);

const accountById = (c: Core, id: bigint) => collection(c.db, accounts).findOne({ _id: id });

async function arrived(what: string, check: (r: ReceivedActivity[]) => boolean): Promise<void> {
  await eventually(async () => check(all()), 30_000, what);
}

test('follow, accept, post, favourite, reblog, edit, delete, block, unfollow: signed, shaped, once each', async () => {
  const alice: TestUser = await createTestUser(core);
  const a = alice.account;
  const bob = await createRemoteAccount(core, serverA.url, 'bob', { domain: 'a.example' });
  const carol = await createRemoteAccount(core, serverA.url, 'carol', { domain: 'a.example' });
  const dave = await createRemoteAccount(core, serverB.url, 'dave', { sharedInbox: false, domain: 'b.example' });
  const erin = await createRemoteAccount(core, serverB.url, 'erin', { sharedInbox: false, domain: 'b.example' });

  // Remote follows of alice are auto-accepted: each follower gets Accept at its personal inbox.
  for (const f of [bob, carol, dave]) await createFollow(core, f as AccountDoc, a, {}, null);
  await arrived('three Accepts', (r) => ofType('Accept', r).length === 3);
  for (const acc of ofType('Accept')) {
    expect(acc.body.actor).toBe(a.uri);
    const follow = acc.body.object as Record<string, unknown>;
    expect(follow.type).toBe('Follow');
    expect(follow.object).toBe(a.uri);
    expect(acc.path).toBe(new URL(`${follow.actor as string}/inbox`).pathname);
  }

  // A public post mentioning dave: server A once through its shared inbox, dave at his inbox.
  const post = await api.call('POST', '/api/v1/statuses', alice.token, { status: `hello @dave@${dave.domain}` });
  expect(post.status).toBe(200);
  await arrived('Create on both servers', (r) => ofType('Create', r).length >= 2);
  const creates = ofType('Create');
  expect(ofType('Create', serverA.received).map((x) => x.path)).toEqual(['/inbox']);
  expect(ofType('Create', serverB.received).map((x) => x.path)).toEqual(['/users/dave/inbox']);
  const create = creates[0].body;
  const note = create.object as Record<string, unknown>;
  expect(create['@context']).toEqual(expect.arrayContaining(['https://www.w3.org/ns/activitystreams']));
  expect(create.actor).toBe(a.uri);
  expect(create.id).toBe(`${note.id as string}/activity`);
  expect(note.type).toBe('Note');
  expect(note.attributedTo).toBe(a.uri);
  expect(note.to).toEqual([AS_PUBLIC]);
  expect(note.cc).toEqual(expect.arrayContaining([a.followersUrl, dave.uri]));
  expect(note.tag).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Mention', href: dave.uri })]));

  // Favourite and reblog of dave's post; follow and unfollow erin (remote: a pending request).
  const remote = await createRemoteStatus(core, dave);
  expect((await api.call('POST', `/api/v1/statuses/${remote._id}/favourite`, alice.token)).status).toBe(200);
  expect((await api.call('POST', `/api/v1/statuses/${remote._id}/reblog`, alice.token)).status).toBe(200);
  expect((await api.call('POST', `/api/v1/accounts/${erin._id}/follow`, alice.token)).status).toBe(200);
  await arrived(
    'Like, Announce, Follow',
    (r) => ofType('Like', r).length === 1 && ofType('Announce', r).length >= 2 && ofType('Follow', r).length === 1,
  );
  const like = ofType('Like')[0];
  expect(like.path).toBe('/users/dave/inbox');
  expect(like.body).toMatchObject({ type: 'Like', actor: a.uri, object: remote.uri });
  const announce = ofType('Announce', serverB.received)[0].body;
  expect(announce).toMatchObject({ type: 'Announce', actor: a.uri, object: remote.uri, to: [AS_PUBLIC] });
  expect(announce.cc).toEqual(expect.arrayContaining([dave.uri, a.followersUrl]));
  const follow = ofType('Follow')[0];
  expect(follow.path).toBe('/users/erin/inbox');
  expect(follow.body).toMatchObject({ type: 'Follow', actor: a.uri, object: erin.uri });

  expect((await api.call('POST', `/api/v1/accounts/${erin._id}/unfollow`, alice.token)).status).toBe(200);
  expect((await api.call('POST', `/api/v1/statuses/${remote._id}/unfavourite`, alice.token)).status).toBe(200);
  await arrived('Undo Follow and Undo Like', (r) => ofType('Undo', r).length >= 2);
  const undoFollow = ofType('Undo').find((u) => (u.body.object as { type: string }).type === 'Follow')!;
  expect((undoFollow.body.object as { id: string }).id).toBe(follow.body.id);
  const undoLike = ofType('Undo').find((u) => (u.body.object as { type: string }).type === 'Like')!;
  expect((undoLike.body.object as { id: string }).id).toBe(like.body.id);

  // Edit, then delete the post: Update and Delete reach the same inboxes as the Create.
  const id = post.body.id as string;
  expect(
    (await api.call('PUT', `/api/v1/statuses/${id}`, alice.token, { status: `edited @dave@${dave.domain}` })).status,
  ).toBe(200);
  await arrived('Update', (r) => ofType('Update', r).length >= 2);
  const update = ofType('Update')[0].body;
  expect((update.object as Record<string, unknown>).content).toContain('edited');
  expect((update.object as Record<string, unknown>).updated).toBeTruthy();
  expect((await api.call('DELETE', `/api/v1/statuses/${id}`, alice.token)).status).toBe(200);
  await arrived('Delete', (r) => ofType('Delete', r).length >= 2);
  expect(ofType('Delete')[0].body).toMatchObject({
    type: 'Delete',
    actor: a.uri,
    object: { id: note.id, type: 'Tombstone' },
  });

  // Block dave: Block to his inbox, and Reject of his follow (he was a follower).
  expect((await api.call('POST', `/api/v1/accounts/${dave._id}/block`, alice.token)).status).toBe(200);
  await arrived('Block and Reject', (r) => ofType('Block', r).length === 1 && ofType('Reject', r).length === 1);
  expect(ofType('Block')[0].body).toMatchObject({ actor: a.uri, object: dave.uri });
  expect(ofType('Reject')[0].path).toBe('/users/dave/inbox');

  // Every request was signed by alice with the headers Mastodon signs, as activity+json, once.
  for (const r of all()) {
    expect(r.error).toBeNull();
    expect(r.verified).toBe(true);
    expect(r.signer).toBe(a.uri);
    expect(r.contentType).toBe('application/activity+json');
    expect(r.signedHeaders).toEqual(['(request-target)', 'host', 'date', 'digest', 'content-type']);
  }
  const keys = all().map((r) => `${r.host}${r.path} ${String(r.body.id ?? JSON.stringify(r.body))}`);
  expect(new Set(keys).size).toBe(keys.length);
}, 120_000);

test('suspension and its end as Update{Person}, a forwarded report as Flag, account deletion as Delete', async () => {
  const mallory = await createTestUser(core);
  const m = mallory.account;
  const reporter = await createTestUser(core);
  const fan = await createRemoteAccount(core, serverA.url, 'fan', { domain: 'a.example' });
  const troll = await createRemoteAccount(core, serverB.url, 'troll', { domain: 'b.example', sharedInbox: false });
  await createFollow(core, fan, m, {}, null);
  const mine = (r: ReceivedActivity) => r.body.actor === m.uri && r.body.type !== 'Accept';
  await arrived('Accept to fan', (r) => r.some((x) => x.body.type === 'Accept' && x.body.actor === m.uri));

  const suspended = await suspendAccount(core, m, null);
  await arrived('Update with suspended', (r) => r.filter(mine).length === 1);
  const upd = all().filter(mine)[0];
  expect(upd.path).toBe('/inbox');
  expect(upd.body).toMatchObject({ type: 'Update', actor: m.uri, object: { id: m.uri, suspended: true } });
  await unsuspendAccount(core, suspended, null);
  await arrived('Update without suspended', (r) => r.filter(mine).length === 2);
  const lifted = all().filter(mine)[1].body.object as Record<string, unknown>;
  expect(lifted.id).toBe(m.uri);
  expect(lifted.suspended).toBeUndefined();

  // A local user reports a remote troll and forwards it: Flag from the instance actor.
  const trollPost = await createRemoteStatus(core, troll, 'rude');
  await createReport(core, reporter.account, troll, {
    statusIds: [trollPost._id],
    comment: 'spam',
    ruleIds: [],
    forward: true,
    forwardToDomains: [],
  });
  await arrived('Flag', (r) => ofType('Flag', r).length === 1);
  const flag = ofType('Flag')[0];
  expect(flag.signer).toBe(`${core.config.baseUrl}/actor`);
  expect(flag.body).toMatchObject({ actor: `${core.config.baseUrl}/actor`, content: 'spam' });
  expect(flag.body.object).toEqual([troll.uri, trollPost.uri]);

  // Deleting the suspended account's data: Delete of the actor to every server we know.
  const again = await suspendAccount(core, (await accountById(core, m._id))!, null);
  await deleteAccountData(core, again, null);
  const actorDeletes = () => all().filter((x) => x.body.type === 'Delete' && x.body.object === m.uri);
  await arrived('Delete of the actor on both servers', () => {
    const hosts = new Set(actorDeletes().map((d) => d.host));
    return hosts.has(new URL(serverA.url).host) && hosts.has(new URL(serverB.url).host);
  });
  for (const d of all().filter((x) => x.body.type === 'Delete' && x.body.object === m.uri)) {
    expect(d.verified).toBe(true);
    expect(d.signer).toBe(m.uri);
  }
}, 120_000);

test('an account no other server follows: its empty follower set is kept, and a remote follower since gets the next post', async () => {
  const hana = await createTestUser(core);
  const h = hana.account;
  const ofHana = (r: ReceivedActivity[]) => ofType('Create', r).filter((x) => x.body.actor === h.uri);
  expect((await api.call('POST', '/api/v1/statuses', hana.token, { status: 'nobody elsewhere yet' })).status).toBe(200);
  // Planned without a remote inbox, and that answer kept (the next post reads no follow records).
  await eventually(
    async () => (await core.redis.hget(followerInboxesKey(h._id), '-')) !== null,
    30_000,
    'the empty follower set kept',
  );

  const gina = await createRemoteAccount(core, serverA.url, 'gina', { domain: 'a.example' });
  await createFollow(core, gina, h, {}, null);
  await arrived('Accept to gina', (r) => r.some((x) => x.body.type === 'Accept' && x.body.actor === h.uri));
  const second = await api.call('POST', '/api/v1/statuses', hana.token, { status: 'now someone elsewhere' });
  expect(second.status).toBe(200);
  await arrived('the second post at a.example', (r) => ofHana(r).length >= 1);
  expect(ofHana(serverA.received).map((x) => (x.body.object as { id: string }).id)).toEqual([second.body.uri]);
});
