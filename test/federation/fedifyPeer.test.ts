// Federation with an independent implementation: a peer built on @fedify/fedify, run as a child
// process (fedifyPeer/server.ts). It checks our WebFinger, actor documents, keys, signatures and
// inbox (Fedify knocks with RFC 9421 first, so our 401 must get it to retry with draft-cavage);
// we check its WebFinger, actor and signatures.
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows } from '../../services/core/model/follows.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { safeFetch } from '../../services/core/activitypub/safeFetch.ts';
import { accountSigningKey } from '../../services/core/activitypub/keys.ts';
import { settles, startInstance, type Instance } from './support.ts';
import { startFedifyPeer, type FedifyPeer } from './fedifyPeer/control.ts';

jest.setTimeout(90_000);

describe('federation with a Fedify peer', () => {
  let ours: Instance;
  let peer: FedifyPeer;
  let peerUrl: string;
  let peerDomain: string;
  let alice: TestUser;
  let aliceUri: string;

  const control = (path: string, body: Record<string, string> = {}) => peer.control(path, body);

  beforeAll(async () => {
    ours = await startInstance();
    peer = await startFedifyPeer();
    ({ url: peerUrl, domain: peerDomain } = peer);
    alice = await createTestUser(ours.core, { username: 'alice' });
    aliceUri = `${ours.url}/users/alice`;
  });
  afterAll(async () => {
    await peer?.stop();
    await ours?.close();
  });

  it('we resolve the Fedify actor through its WebFinger', async () => {
    const res = await ours.call('GET', `/api/v1/accounts/lookup?acct=carol@${peerDomain}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ username: 'carol', acct: `carol@${peerDomain}`, display_name: 'Carol on Fedify' });
    expect(res.body.note).toContain('An independent peer');
  });

  it('Fedify reads our WebFinger, actor and key', async () => {
    const found = await control('lookup', { resource: aliceUri });
    expect(found).toEqual({
      subject: `acct:alice@${ours.domain}`,
      self: aliceUri,
      person: true,
      preferredUsername: 'alice',
      inbox: `${aliceUri}/inbox`,
      sharedInbox: `${ours.url}/inbox`,
      keyId: `${aliceUri}#main-key`,
      keyOwner: aliceUri,
    });
  });

  it('its signed Follow and Create reach our inbox and ingress', async () => {
    const followId = `${peerUrl}/follows/1`;
    await control('follow', { target: aliceUri, id: followId });
    const carol = await settles(
      async () => {
        const c = await collection(ours.core.db, accounts).findOne({ uri: `${peerUrl}/users/carol` });
        expect(c).not.toBeNull();
        expect(
          await collection(ours.core.db, follows).findOne({ accountId: c!._id, targetAccountId: alice.account._id }),
        ).toMatchObject({ uri: followId });
        return c!;
      },
      30_000,
      'Fedify follow stored',
    );
    expect(carol.keyId).toBe(`${peerUrl}/users/carol#main-key`);

    const noteId = `${peerUrl}/notes/1`;
    await control('note', {
      target: aliceUri,
      id: noteId,
      content: '<p>Hello from Fedify</p>',
      mention: `@alice@${ours.domain}`,
    });
    const note = await settles(
      async () => {
        const s = await collection(ours.core.db, statuses).findOne({ uri: noteId });
        expect(s).not.toBeNull();
        return s!;
      },
      30_000,
      'Fedify note stored',
    );
    expect(note).toMatchObject({ visibility: 'public', mentionedAccountIds: [alice.account._id] });
    expect(note.content).toContain('Hello from Fedify');
  });

  it('a local post mentioning the Fedify account by handle resolves it', async () => {
    const post = await ours.call('POST', '/api/v1/statuses', alice.token, { status: `@carol@${peerDomain} hello` });
    expect(post.status).toBe(200);
    expect(post.body.mentions).toEqual([expect.objectContaining({ acct: `carol@${peerDomain}`, username: 'carol' })]);
    expect(post.body.content).toContain(`href="${peerUrl}/@carol"`);
  });

  it('Fedify verifies our signature on an activity we POST to its inbox', async () => {
    const carolUri = `${peerUrl}/users/carol`;
    const id = `${aliceUri}#accepts/follows/1`;
    const res = await safeFetch(ours.core.config, `${carolUri}/inbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/activity+json' },
      body: JSON.stringify({
        '@context': 'https://www.w3.org/ns/activitystreams',
        id,
        type: 'Accept',
        actor: aliceUri,
        object: { id: `${peerUrl}/follows/1`, type: 'Follow', actor: carolUri, object: aliceUri },
      }),
      sign: await accountSigningKey(ours.core, alice.account),
    });
    expect(res.status).toBeLessThan(300);
    await settles(
      async () => {
        expect(await control('received')).toContainEqual(
          expect.objectContaining({ type: 'Accept', id, actor: aliceUri }),
        );
      },
      20_000,
      'Fedify received our Accept',
    );
  });

  it('Fedify backfills a thread from our replies collection: CollectionPages with partOf, items and next', async () => {
    const bob = await createTestUser(ours.core, { username: 'bob' });
    const root = await ours.call('POST', '/api/v1/statuses', alice.token, { status: 'a thread' });
    const own = await ours.call('POST', '/api/v1/statuses', alice.token, {
      status: 'and more',
      in_reply_to_id: root.body.id,
    });
    const other = await ours.call('POST', '/api/v1/statuses', bob.token, {
      status: 'an answer',
      in_reply_to_id: root.body.id,
    });
    const walked = await control('replies', { note: root.body.uri });
    const replies = `${root.body.uri}/replies`;
    expect(walked).toEqual({
      note: true,
      collection: replies,
      pages: [
        // The first page embedded in the Note (own replies by id), then the page of others'.
        { id: null, page: true, partOf: replies, items: [own.body.uri] },
        { id: `${replies}?min_id=${own.body.id}&page=true`, page: true, partOf: replies, items: [] },
        {
          id: `${replies}?only_other_accounts=true&page=true`,
          page: true,
          partOf: replies,
          items: [other.body.uri],
        },
      ],
    });
  });
});
