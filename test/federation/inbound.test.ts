// Inbound federation against a hand-written peer: signatures (and every way to break them),
// limits, and the ingress pipeline turning Follow, Create, Like, Announce, Update, Delete, Undo,
// Accept and Block into the same records and events as local actions; a followed remote account's
// post reaches a local follower's home timeline.
import { generateKeyPairSync, createPrivateKey } from 'node:crypto';

import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { follows } from '../../services/core/model/follows.ts';
import { favourites } from '../../services/core/model/favourites.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { recordFollow } from '../../services/core/graph/relations.ts';
import { digestHeader } from '../../services/core/activitypub/httpSignatures.ts';
import { createDomainBlock } from '../../services/core/moderation/domainBlocks.ts';
import { settles, startInstance, type Instance } from './support.ts';
import { startMiniPeer, type MiniPeer, type PeerActor } from './miniPeer.ts';

jest.setTimeout(60_000);

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';

describe('inbound ActivityPub', () => {
  let ours: Instance;
  let peer: MiniPeer;
  let alice: TestUser;
  let bob: PeerActor;
  let aliceUri: string;
  let inbox: string;
  let n = 0;
  const nextId = () => `${peer.url}/activities/${++n}`;

  beforeAll(async () => {
    ours = await startInstance();
    peer = await startMiniPeer();
    alice = await createTestUser(ours.core, { username: 'alice' });
    bob = peer.addActor('bob');
    aliceUri = `${ours.url}/users/alice`;
    inbox = `${ours.url}/users/alice/inbox`;
  });
  afterAll(async () => {
    await peer?.close();
    await ours?.close();
  });

  const remoteBob = () => collection(ours.core.db, accounts).findOne({ uri: bob.uri });

  it('refuses unsigned, forged, stale and tampered requests with 401, nothing stored', async () => {
    const follow = {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Follow',
      actor: bob.uri,
      object: aliceUri,
    };
    expect((await peer.send(bob, inbox, follow, { unsigned: true })).status).toBe(401);
    const forger = createPrivateKey(
      generateKeyPairSync('rsa', {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      }).privateKey,
    );
    expect((await peer.send(bob, inbox, follow, { key: forger })).status).toBe(401);
    expect((await peer.send(bob, inbox, follow, { date: new Date(Date.now() - 13 * 3600_000) })).status).toBe(401);
    expect((await peer.send(bob, inbox, follow, { digest: digestHeader('{}') })).status).toBe(401);
    const res = await fetch(inbox, {
      method: 'POST',
      headers: {
        'content-type': 'application/activity+json',
        signature: 'keyId="x",signature="AAAA"',
        date: new Date().toUTCString(),
      },
      body: '{"type":"Follow"}',
    });
    expect(res.status).toBe(401);
    expect(await collection(ours.core.db, follows).countDocuments({})).toBe(0);
  });

  it('refuses a 10 MB body (413) and deeply nested JSON (400)', async () => {
    const big = await fetch(inbox, {
      method: 'POST',
      headers: { 'content-type': 'application/activity+json', signature: 'keyId="x",signature="AAAA"' },
      body: `{"a":"${'x'.repeat(10 * 1024 * 1024)}"}`,
    });
    expect(big.status).toBe(413);
    const nested = await peer.send(bob, inbox, {}, { rawBody: '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}' });
    expect(nested.status).toBe(400);
    const notJson = await peer.send(bob, inbox, {}, { rawBody: 'not json' });
    expect(notJson.status).toBe(400);
  });

  it('accepts an unknown activity type with 202 and ignores it', async () => {
    const res = await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'EmojiReact',
      actor: bob.uri,
      object: aliceUri,
    });
    expect(res.status).toBe(202);
  });

  it('Follow: auto-accepted, FollowCreated (for delivery of Accept) carries the Follow id', async () => {
    const id = nextId();
    const res = await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id,
      type: 'Follow',
      actor: bob.uri,
      object: aliceUri,
    });
    expect(res.status).toBe(202);
    const account = await settles(
      async () => {
        const b = await remoteBob();
        expect(b).not.toBeNull();
        return b!;
      },
      20_000,
      'remote account stored',
    );
    expect(account).toMatchObject({ username: 'bob', domain: peer.domain, inboxUrl: bob.document.inbox });
    await settles(
      async () => {
        expect(
          await collection(ours.core.db, follows).findOne({
            accountId: account._id,
            targetAccountId: alice.account._id,
          }),
        ).toMatchObject({ uri: id });
      },
      20_000,
      'follow stored',
    );
    await settles(
      async () => {
        const event = ours.published.find((e) => e.type === 'FollowCreated' && e.payload.uri === id);
        expect(event?.payload).toMatchObject({ accountDomain: peer.domain, targetDomain: null, fromRequest: false });
      },
      10_000,
      'FollowCreated published',
    );
    const lookup = await ours.call('GET', `/api/v1/accounts/lookup?acct=bob@${peer.domain}`);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toMatchObject({ acct: `bob@${peer.domain}`, username: 'bob' });
  });

  it('Create: a followed remote post reaches the local follower’s home timeline; Like, Announce, Delete', async () => {
    const b = (await remoteBob())!;
    // alice follows bob too (as if accepted), so bob's posts belong in her home feed.
    await collection(ours.core.db, follows).insertOne({
      _id: 777_777n,
      accountId: alice.account._id,
      targetAccountId: b._id,
      showReblogs: true,
      notify: false,
      languages: null,
      uri: null,
      createdAt: new Date(),
    });
    const noteId = `${bob.uri}/statuses/1`;
    const create = {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${noteId}/activity`,
      type: 'Create',
      actor: bob.uri,
      to: [PUBLIC],
      cc: [`${bob.uri}/followers`],
      object: {
        id: noteId,
        type: 'Note',
        attributedTo: bob.uri,
        content: '<p>Hello <script>alert(1)</script>from the peer #fediverse</p>',
        published: new Date().toISOString(),
        to: [PUBLIC],
        cc: [`${bob.uri}/followers`],
        tag: [{ type: 'Hashtag', name: '#fediverse', href: `${peer.url}/tags/fediverse` }],
      },
    };
    expect((await peer.send(bob, `${ours.url}/inbox`, create)).status).toBe(202);
    const stored = await settles(
      async () => {
        const s = await collection(ours.core.db, statuses).findOne({ uri: noteId });
        expect(s).not.toBeNull();
        return s!;
      },
      20_000,
      'remote status stored',
    );
    expect(stored.content).not.toContain('script');
    expect(stored).toMatchObject({ local: false, visibility: 'public', tagNames: ['fediverse'] });
    await settles(
      async () => {
        const home = await ours.call('GET', '/api/v1/timelines/home', alice.token);
        expect(home.body.map((s: { uri: string }) => s.uri)).toContain(noteId);
      },
      20_000,
      'home timeline has the remote post',
    );

    // Like and Announce of alice's post.
    const post = await postStatus(ours.core, alice.account, { text: 'like me', visibility: 'public' });
    const postUri = `${ours.url}/users/alice/statuses/${post._id}`;
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${bob.uri}#likes/1`,
      type: 'Like',
      actor: bob.uri,
      object: postUri,
    });
    const announceId = `${bob.uri}/statuses/2/activity`;
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: announceId,
      type: 'Announce',
      actor: bob.uri,
      published: new Date().toISOString(),
      to: [PUBLIC],
      cc: [aliceUri],
      object: postUri,
    });
    await settles(
      async () => {
        const s = await collection(ours.core.db, statuses).findOne({ _id: post._id });
        expect(s).toMatchObject({ favouritesCount: 1, reblogsCount: 1 });
      },
      20_000,
      'like and announce counted',
    );
    expect(await collection(ours.core.db, favourites).countDocuments({ accountId: b._id })).toBe(1);

    // Undo Like, Undo Announce.
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${bob.uri}#likes/1/undo`,
      type: 'Undo',
      actor: bob.uri,
      object: { id: `${bob.uri}#likes/1`, type: 'Like', actor: bob.uri, object: postUri },
    });
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${announceId}/undo`,
      type: 'Undo',
      actor: bob.uri,
      object: { id: announceId, type: 'Announce', actor: bob.uri, object: postUri },
    });
    await settles(
      async () => {
        const s = await collection(ours.core.db, statuses).findOne({ _id: post._id });
        expect(s).toMatchObject({ favouritesCount: 0, reblogsCount: 0 });
      },
      20_000,
      'undo',
    );

    // Delete of the remote post.
    await peer.send(bob, `${ours.url}/inbox`, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${noteId}#delete`,
      type: 'Delete',
      actor: bob.uri,
      to: [PUBLIC],
      object: { id: noteId, type: 'Tombstone' },
    });
    await settles(
      async () => {
        expect((await collection(ours.core.db, statuses).findOne({ uri: noteId }))?.deletedAt).toBeInstanceOf(Date);
      },
      20_000,
      'deleted',
    );
  });

  it('drops objects whose id is on another host, and activities whose actor is not the signer', async () => {
    const foreign = 'https://victim.example/users/carol/statuses/1';
    const res = await peer.send(bob, `${ours.url}/inbox`, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Create',
      actor: bob.uri,
      to: [PUBLIC, aliceUri],
      object: { id: foreign, type: 'Note', attributedTo: bob.uri, content: 'spoof', to: [PUBLIC, aliceUri] },
    });
    expect(res.status).toBe(202);
    const impersonation = await peer.send(bob, `${ours.url}/inbox`, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Create',
      actor: 'https://victim.example/users/carol',
      to: [PUBLIC, aliceUri],
      object: {
        id: 'https://victim.example/users/carol/statuses/2',
        type: 'Note',
        content: 'spoof',
        to: [PUBLIC, aliceUri],
      },
    });
    expect(impersonation.status).toBe(202);
    // A later, valid activity from the same actor is processed: the earlier ones were dropped, not queued behind.
    const marker = `${bob.uri}/statuses/marker`;
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${marker}/activity`,
      type: 'Create',
      actor: bob.uri,
      to: [aliceUri],
      object: {
        id: marker,
        type: 'Note',
        attributedTo: bob.uri,
        content: 'direct',
        to: [aliceUri],
        tag: [{ type: 'Mention', href: aliceUri }],
      },
    });
    await settles(
      async () => {
        expect(await collection(ours.core.db, statuses).findOne({ uri: marker })).toMatchObject({
          visibility: 'direct',
        });
      },
      20_000,
      'marker',
    );
    expect(await collection(ours.core.db, statuses).findOne({ uri: foreign })).toBeNull();
    expect(
      await collection(ours.core.db, statuses).findOne({ uri: 'https://victim.example/users/carol/statuses/2' }),
    ).toBeNull();
  });

  it('Accept of our Follow turns the request into a follow; Undo Follow ends theirs; Block cuts both', async () => {
    const carol = peer.addActor('carol');
    const lookup = await ours.call('GET', `/api/v1/accounts/lookup?acct=carol@${peer.domain}`);
    expect(lookup.status).toBe(200);
    const followed = await ours.call('POST', `/api/v1/accounts/${lookup.body.id}/follow`, alice.token);
    expect(followed.body).toMatchObject({ following: false, requested: true });
    const request = await settles(
      async () => {
        const found = ours.published.find(
          (e) => e.type === 'FollowRequestCreated' && e.payload.targetAccountId === lookup.body.id,
        );
        expect(found).toBeDefined();
        return found;
      },
      10_000,
      'FollowRequestCreated published',
    );
    const followUri = String(request?.payload.uri);
    expect(followUri).toMatch(new RegExp(`^${aliceUri}#follows/\\d+$`));
    await peer.send(carol, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: `${carol.uri}#accepts/follows/1`,
      type: 'Accept',
      actor: carol.uri,
      object: { id: followUri, type: 'Follow', actor: aliceUri, object: carol.uri },
    });
    await settles(
      async () => {
        const rel = await ours.call('GET', `/api/v1/accounts/relationships?id[]=${lookup.body.id}`, alice.token);
        expect(rel.body[0]).toMatchObject({ following: true, requested: false });
      },
      20_000,
      'following after Accept',
    );

    const b = (await remoteBob())!;
    await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Undo',
      actor: bob.uri,
      object: { id: `${peer.url}/activities/x`, type: 'Follow', actor: bob.uri, object: aliceUri },
    });
    await settles(
      async () => {
        expect(
          await collection(ours.core.db, follows).findOne({ accountId: b._id, targetAccountId: alice.account._id }),
        ).toBeNull();
      },
      20_000,
      'unfollowed',
    );
    const c = (await collection(ours.core.db, accounts).findOne({ uri: carol.uri }))!;
    await peer.send(carol, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Block',
      actor: carol.uri,
      object: aliceUri,
    });
    await settles(
      async () => {
        expect(
          await collection(ours.core.db, follows).findOne({ accountId: alice.account._id, targetAccountId: c._id }),
        ).toBeNull();
      },
      20_000,
      'block cut the follow',
    );
  });

  it('Reject of our pending Follow drops the request; Reject of an accepted one ends the follow', async () => {
    const erin = peer.addActor('erin');
    const lookup = await ours.call('GET', `/api/v1/accounts/lookup?acct=erin@${peer.domain}`);
    expect(lookup.status).toBe(200);
    const relationship = async () =>
      (await ours.call('GET', `/api/v1/accounts/relationships?id[]=${lookup.body.id}`, alice.token)).body[0];
    const reject = () =>
      peer.send(erin, inbox, {
        '@context': 'https://www.w3.org/ns/activitystreams',
        id: nextId(),
        type: 'Reject',
        actor: erin.uri,
        object: { type: 'Follow', actor: aliceUri, object: erin.uri },
      });
    const follow = await ours.call('POST', `/api/v1/accounts/${lookup.body.id}/follow`, alice.token);
    expect(follow.body).toMatchObject({ following: false, requested: true });
    await reject();
    await settles(
      async () => expect(await relationship()).toMatchObject({ following: false, requested: false }),
      20_000,
      'request dropped after Reject',
    );

    // Accepted already (recorded directly): the Reject removes alice from erin's followers.
    const e = (await collection(ours.core.db, accounts).findOne({ uri: erin.uri }))!;
    await recordFollow(ours.core, alice.account._id, e._id);
    expect(await relationship()).toMatchObject({ following: true });
    await reject();
    await settles(
      async () => expect(await relationship()).toMatchObject({ following: false, requested: false }),
      20_000,
      'follow ended after Reject',
    );
  });

  it('a rotated key: the new key is fetched although the old one is cached, and the old one stops working', async () => {
    const rita = peer.addActor('rita');
    const listen = () => ({
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Listen',
      actor: rita.uri,
      object: aliceUri,
    });
    expect((await peer.send(rita, inbox, listen())).status).toBe(202); // fetched, stored and cached
    expect((await peer.send(rita, inbox, listen())).status).toBe(202);
    const old = rita.privateKey;
    const fresh = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    rita.privateKey = createPrivateKey(fresh.privateKey);
    rita.document.publicKey = { id: rita.keyId, owner: rita.uri, publicKeyPem: fresh.publicKey };
    expect((await peer.send(rita, inbox, listen())).status).toBe(202);
    expect((await peer.send(rita, inbox, listen(), { key: old })).status).toBe(401);
    expect((await collection(ours.core.db, accounts).findOne({ uri: rita.uri }))!.publicKeyPem).toBe(fresh.publicKey);
  });

  it('answers 403 to a domain the instance suspended (its domain normalised first)', async () => {
    await createDomainBlock(ours.core, { domain: peer.domain.toUpperCase(), severity: 'suspend' }, null);
    const res = await peer.send(bob, inbox, {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: nextId(),
      type: 'Follow',
      actor: bob.uri,
      object: aliceUri,
    });
    expect(res.status).toBe(403);
  });
});
