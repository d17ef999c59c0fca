// The ingress pipeline's batches (services/core/activitypub/ingress/batch.ts) on the real servers:
// a delivery seen twice (in one batch or in two) is applied once, each actor's activities keep
// their order inside a mixed batch, and an activity that fails does not sink the rest of its batch.
// The remote actors are stored as known (fresh) accounts, so nothing is fetched.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts, type AccountDoc } from '../../../services/core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../../services/core/model/statuses.ts';
import { favourites } from '../../../services/core/model/favourites.ts';
import { statusEdits } from '../../../services/core/model/statusEdits.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { followRequests } from '../../../services/core/model/followRequests.ts';
import { recordBlock, recordFollow } from '../../../services/core/graph/relations.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { processInboundBatch } from '../../../services/core/activitypub/ingress/batch.ts';
import type { InboundDelivery } from '../../../services/core/activitypub/ingress/process.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { testConfig } from '../../support/config.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';

jest.setTimeout(60_000);

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
let core: Core;
let published: OutboxEvent[];
let alice: TestUser;
let aliceStatus: StatusDoc;
let nextAccountId = 800_000_000n;

beforeAll(async () => {
  ({ core, published } = await createTestCore(testConfig({ LOCAL_DOMAIN: 'batch.test' })));
  alice = await createTestUser(core, { username: 'alice' });
  aliceStatus = await postStatus(core, alice.account, { text: 'hello fediverse' });
});
afterAll(async () => {
  if (core) await closeTestCore(core);
});

/** A known remote actor on `host`, followed by alice (so its posts are wanted). */
async function remoteActor(host: string, username: string): Promise<AccountDoc> {
  const uri = `https://${host}/users/${username}`;
  const account: AccountDoc = {
    ...alice.account,
    _id: nextAccountId++,
    username,
    usernameLower: username,
    domain: host,
    uri,
    url: `https://${host}/@${username}`,
    inboxUrl: `${uri}/inbox`,
    sharedInboxUrl: `https://${host}/inbox`,
    followersUrl: `${uri}/followers`,
    featuredUrl: null,
    publicKeyPem: 'unused',
    privateKeyPem: null,
    keyId: `${uri}#main-key`,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    lastFetchedAt: new Date(),
  };
  await collection(core.db, accounts).insertOne(account);
  await recordFollow(core, alice.account._id, account._id);
  return account;
}

function delivery(actor: AccountDoc, activity: Record<string, unknown>): InboundDelivery {
  return { activity: JSON.stringify({ actor: actor.uri, ...activity }), signerUri: actor.uri, inboxAccountId: null };
}

const create = (actor: AccountDoc, n: string, extra: Record<string, unknown> = {}) =>
  delivery(actor, {
    id: `${actor.uri}/statuses/${n}/activity`,
    type: 'Create',
    to: [PUBLIC],
    object: {
      id: `${actor.uri}/statuses/${n}`,
      type: 'Note',
      attributedTo: actor.uri,
      content: `<p>note ${n} #batched</p>`,
      to: [PUBLIC],
      cc: [actor.followersUrl],
      tag: [
        { type: 'Hashtag', name: '#batched' },
        { type: 'Mention', href: alice.account.uri },
      ],
      ...extra,
    },
  });
const like = (actor: AccountDoc, status: StatusDoc, n: string) =>
  delivery(actor, { id: `${actor.uri}/likes/${n}`, type: 'Like', object: status.uri });

const noteOf = (actor: AccountDoc, n: string) =>
  collection(core.db, statuses).findOne({ uri: `${actor.uri}/statuses/${n}` });
const accountOf = (actor: AccountDoc) => collection(core.db, accounts).findOne({ _id: actor._id });
const statusOf = (s: StatusDoc) => collection(core.db, statuses).findOne({ _id: s._id });

it('applies a delivery seen twice once, within one batch and across batches', async () => {
  const bob = await remoteActor('one.example', 'bob');
  const carol = await remoteActor('two.example', 'carol');
  const batch = [
    create(bob, '1'),
    create(bob, '1'), // the sender's retry, right after
    like(carol, aliceStatus, '1'),
    like(bob, aliceStatus, '1'),
    create(carol, '1'),
    like(carol, aliceStatus, '1'), // again, later in the batch
    like(bob, aliceStatus, '1'),
  ];
  const edit = delivery(bob, {
    id: `${bob.uri}/statuses/1#updates/1`,
    type: 'Update',
    object: {
      id: `${bob.uri}/statuses/1`,
      type: 'Note',
      attributedTo: bob.uri,
      content: '<p>note 1, edited #batched</p>',
      updated: new Date(Date.now() + 1000).toISOString(),
      tag: [{ type: 'Hashtag', name: '#batched' }],
    },
  });
  batch.push(edit, like(bob, aliceStatus, '1'), edit);
  expect(await processInboundBatch(core, batch)).toEqual([]);
  expect(await processInboundBatch(core, batch)).toEqual([]); // the whole batch redelivered

  const note = await noteOf(bob, '1');
  expect(note).toMatchObject({ deletedAt: null, tagNames: ['batched'], content: '<p>note 1, edited #batched</p>' });
  expect(note!.mentionedAccountIds).toEqual([]); // the edit dropped the mention
  expect(await collection(core.db, statusEdits).countDocuments({ statusId: note!._id })).toBe(2);
  expect(published.filter((e) => e.type === 'StatusUpdated' && e.payload.statusId === String(note!._id))).toHaveLength(
    1,
  );
  expect(await collection(core.db, statuses).countDocuments({ accountId: { $in: [bob._id, carol._id] } })).toBe(2);
  expect((await accountOf(bob))!.statusesCount).toBe(1);
  expect((await accountOf(carol))!.statusesCount).toBe(1);
  expect(await collection(core.db, favourites).countDocuments({ statusId: aliceStatus._id })).toBe(2);
  expect((await statusOf(aliceStatus))!.favouritesCount).toBe(2);
  // One event per effect: fan-out, notifications and trends see each once.
  expect(published.filter((e) => e.type === 'StatusCreated' && e.payload.statusId === String(note!._id))).toHaveLength(
    1,
  );
  expect(
    published.filter((e) => e.type === 'FavouriteCreated' && e.payload.statusId === String(aliceStatus._id)),
  ).toHaveLength(2);
});

it("keeps each actor's order in a mixed batch", async () => {
  const dave = await remoteActor('three.example', 'dave');
  const erin = await remoteActor('four.example', 'erin');
  const frank = await remoteActor('five.example', 'frank');
  const target = await postStatus(core, alice.account, { text: 'boost me' });
  const later = new Date(Date.now() + 1000).toISOString();
  const failures = await processInboundBatch(core, [
    create(dave, '1', { published: new Date(Date.now() - 60_000).toISOString() }),
    create(erin, '1'),
    // frank deletes a post before its Create arrives: the Create must not bring it back.
    delivery(frank, { id: `${frank.uri}/statuses/1#delete`, type: 'Delete', object: `${frank.uri}/statuses/1` }),
    delivery(dave, {
      id: `${dave.uri}/statuses/1#updates/1`,
      type: 'Update',
      object: {
        id: `${dave.uri}/statuses/1`,
        type: 'Note',
        attributedTo: dave.uri,
        content: '<p>edited</p>',
        updated: later,
        to: [PUBLIC],
      },
    }),
    like(erin, target, '1'),
    create(frank, '1'),
    delivery(dave, { id: `${dave.uri}/statuses/1#delete`, type: 'Delete', object: `${dave.uri}/statuses/1` }),
    delivery(erin, {
      id: `${erin.uri}/likes/1#undo`,
      type: 'Undo',
      object: { id: `${erin.uri}/likes/1`, type: 'Like', actor: erin.uri, object: target.uri },
    }),
    delivery(erin, { id: `${erin.uri}/announces/1`, type: 'Announce', to: [PUBLIC], object: target.uri }),
  ]);
  expect(failures).toEqual([]);

  const daveNote = await noteOf(dave, '1');
  expect(daveNote!.content).toContain('edited'); // the Update came after the Create ...
  expect(daveNote!.deletedAt).not.toBeNull(); // ... and the Delete after both
  expect(await collection(core.db, statusEdits).countDocuments({ statusId: daveNote!._id })).toBe(2);
  expect((await accountOf(dave))!.statusesCount).toBe(0);
  expect(await noteOf(erin, '1')).not.toBeNull();
  expect(await noteOf(frank, '1')).toBeNull();
  expect(await collection(core.db, favourites).countDocuments({ statusId: target._id })).toBe(0);
  const boosted = await statusOf(target);
  expect(boosted).toMatchObject({ favouritesCount: 0, reblogsCount: 1 });
  expect((await accountOf(erin))!.statusesCount).toBe(2);

  // The boost undone (by the Announce's id), twice: counted down once.
  const undo = delivery(erin, {
    id: `${erin.uri}/announces/1#undo`,
    type: 'Undo',
    object: { id: `${erin.uri}/announces/1`, type: 'Announce', actor: erin.uri, object: target.uri },
  });
  expect(await processInboundBatch(core, [undo, like(erin, target, '2'), undo])).toEqual([]);
  expect(await statusOf(target)).toMatchObject({ favouritesCount: 1, reblogsCount: 0 });
  expect((await accountOf(erin))!.statusesCount).toBe(1);
});

it('an activity that fails does not sink the others in its batch', async () => {
  const gina = await remoteActor('six.example', 'gina');
  const hank = await remoteActor('seven.example', 'hank');
  const ivan = await remoteActor('eight.example', 'ivan');
  const target = await postStatus(core, alice.account, { text: 'like me' });
  const broken = { ...create(hank, '1'), inboxAccountId: 'not-an-id' }; // a producer's bad record
  const failures = await processInboundBatch(core, [
    create(gina, '1'),
    broken,
    like(ivan, target, '1'),
    create(hank, '2'),
    create(gina, '2', { inReplyTo: `${gina.uri}/statuses/1` }),
  ]);
  expect(failures.map((f) => f.index)).toEqual([1]);
  expect(await noteOf(gina, '1')).not.toBeNull();
  const reply = await noteOf(gina, '2');
  const parent = await noteOf(gina, '1');
  expect(reply).toMatchObject({ inReplyToId: parent!._id, conversationId: parent!.conversationId });
  expect((await statusOf(parent!))!.repliesCount).toBe(1);
  expect(await noteOf(hank, '1')).toBeNull();
  expect(await noteOf(hank, '2')).not.toBeNull(); // hank's next activity still went through
  expect((await statusOf(target))!.favouritesCount).toBe(1);
});

it('stores two posts published in the same millisecond even when their ids would repeat', async () => {
  const jane = await remoteActor('nine.example', 'jane');
  const kyle = await remoteActor('ten.example', 'kyle');
  const published = '2026-01-02T03:04:05Z'; // whole seconds, as many servers send
  const counter = Number((await core.redis.get('ids:status:past')) ?? 0);
  expect(await processInboundBatch(core, [create(jane, '1', { published })])).toEqual([]);
  // The counter comes round to the same value (65,536 statuses later): the id is taken.
  await core.redis.set('ids:status:past', String(counter));
  expect(await processInboundBatch(core, [create(kyle, '1', { published })])).toEqual([]);
  const a = await noteOf(jane, '1');
  const b = await noteOf(kyle, '1');
  expect(a).not.toBeNull();
  expect(b).not.toBeNull();
  expect(a!._id).not.toBe(b!._id);
  expect(a!.createdAt).toEqual(b!.createdAt);
});

it('boosts again after an Undo of the boost, and a redelivered Undo does not take the new boost', async () => {
  const lena = await remoteActor('eleven.example', 'lena');
  const target = await postStatus(core, alice.account, { text: 'boost, unboost, boost' });
  const announce = (n: string) =>
    delivery(lena, { id: `${lena.uri}/announces/${n}`, type: 'Announce', to: [PUBLIC], object: target.uri });
  const undo = (n: string) =>
    delivery(lena, {
      id: `${lena.uri}/announces/${n}#undo`,
      type: 'Undo',
      object: { id: `${lena.uri}/announces/${n}`, type: 'Announce', actor: lena.uri, object: target.uri },
    });
  const live = () => collection(core.db, statuses).countDocuments({ reblogOfId: target._id, deletedAt: null });
  const batch = [announce('1'), undo('1'), announce('2')];
  expect(await processInboundBatch(core, batch)).toEqual([]);
  expect(await statusOf(target)).toMatchObject({ reblogsCount: 1 });
  expect(await processInboundBatch(core, batch)).toEqual([]); // redelivered (a rebalance)
  expect(await statusOf(target)).toMatchObject({ reblogsCount: 1 });
  expect(await live()).toBe(1);
  expect(await processInboundBatch(core, [undo('2')])).toEqual([]);
  expect(await processInboundBatch(core, [announce('3')])).toEqual([]);
  expect(await statusOf(target)).toMatchObject({ reblogsCount: 1 });
  expect(await live()).toBe(1);
});

it('applies Follows, Undos of Follows and Deletes of a batch together, each once, with their counts', async () => {
  const lockie = await createTestUser(core, { username: 'lockie', locked: true });
  const followers = await Promise.all(
    ['kim', 'lou', 'max', 'ned'].map((name, i) => remoteActor(`f${i}.example`, name)),
  );
  const [kim, lou, max, ned] = followers as [AccountDoc, AccountDoc, AccountDoc, AccountDoc];
  const follow = (actor: AccountDoc, target: TestUser, n: string) =>
    delivery(actor, { id: `${actor.uri}#follows/${n}`, type: 'Follow', object: target.account.uri });
  const undoFollow = (actor: AccountDoc, target: TestUser, n: string) =>
    delivery(actor, {
      id: `${actor.uri}#follows/${n}/undo`,
      type: 'Undo',
      object: { id: `${actor.uri}#follows/${n}`, type: 'Follow', actor: actor.uri, object: target.account.uri },
    });
  const before = (await accountOf(alice.account))!.followersCount;
  // max's Follow twice (a redelivery in the next batch); ned asks the locked account.
  expect(
    await processInboundBatch(core, [
      follow(kim, alice, '1'),
      follow(lou, alice, '1'),
      follow(max, alice, '1'),
      follow(ned, lockie, '1'),
      create(kim, 'gone', { inReplyTo: aliceStatus.uri }),
    ]),
  ).toEqual([]);
  expect(await processInboundBatch(core, [follow(max, alice, '1')])).toEqual([]);
  const followersOf = (u: TestUser) => collection(core.db, follows).find({ targetAccountId: u.account._id }).toArray();
  expect(
    (await followersOf(alice)).map((f) => f.accountId).filter((id) => followers.some((a) => a._id === id)),
  ).toEqual(expect.arrayContaining([kim._id, lou._id, max._id]));
  expect((await accountOf(alice.account))!.followersCount).toBe(before + 3);
  expect((await accountOf(kim))!.followingCount).toBe(1);
  expect(await followersOf(lockie)).toHaveLength(0);
  expect(await collection(core.db, followRequests).countDocuments({ accountId: ned._id })).toBe(1);
  const created = published.filter((e) => e.type === 'FollowCreated' && e.payload.accountId === String(max._id));
  expect(created).toHaveLength(1);
  expect(created[0]!.payload).toMatchObject({
    uri: `${max.uri}#follows/1`,
    targetAccountId: String(alice.account._id),
  });
  const reply = await noteOf(kim, 'gone');
  expect((await statusOf(aliceStatus))!.repliesCount).toBeGreaterThan(0);
  const replies = (await statusOf(aliceStatus))!.repliesCount;

  // Undos (lou's twice, ned's of its request), kim's reply deleted, a Delete of a status never seen.
  expect(
    await processInboundBatch(core, [
      undoFollow(lou, alice, '1'),
      undoFollow(ned, lockie, '1'),
      delivery(kim, { id: `${kim.uri}/statuses/gone#delete`, type: 'Delete', object: `${kim.uri}/statuses/gone` }),
      delivery(max, { id: `${max.uri}/statuses/never#delete`, type: 'Delete', object: `${max.uri}/statuses/never` }),
    ]),
  ).toEqual([]);
  expect(await processInboundBatch(core, [undoFollow(lou, alice, '1')])).toEqual([]);
  expect((await accountOf(alice.account))!.followersCount).toBe(before + 2);
  expect((await accountOf(lou))!.followingCount).toBe(0);
  expect(await collection(core.db, followRequests).countDocuments({ accountId: ned._id })).toBe(0);
  expect(published.filter((e) => e.type === 'FollowDeleted' && e.payload.accountId === String(lou._id))).toHaveLength(
    1,
  );
  expect((await statusOf(reply!))!.deletedAt).not.toBeNull();
  expect((await statusOf(aliceStatus))!.repliesCount).toBe(replies - 1);
  expect((await accountOf(kim))!.statusesCount).toBe(0);
  // The status deleted before its Create arrives stays away.
  expect(await processInboundBatch(core, [create(max, 'never')])).toEqual([]);
  expect(await noteOf(max, 'never')).toBeNull();
});

it('a batch of Likes favourites only where the author does not block the liker', async () => {
  const welcome = await remoteActor('likes-ok.example', 'welcome');
  const blocked = await remoteActor('likes-blocked.example', 'blocked');
  const post = await postStatus(core, alice.account, { text: 'like me, or not' });
  await recordBlock(core, alice.account._id, blocked._id);
  expect(await processInboundBatch(core, [like(welcome, post, 'w1'), like(blocked, post, 'b1')])).toEqual([]);
  const likers = await collection(core.db, favourites).find({ statusId: post._id }).toArray();
  expect(likers.map((f) => f.accountId)).toEqual([welcome._id]);
  expect((await statusOf(post))?.favouritesCount).toBe(1);
});
