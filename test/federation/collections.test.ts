// Collections (Mastodon 4.6, FEP-7aa9) between two instances of this server: the actor's
// `featuredCollections` and `interactionPolicy.canFeature`; a local curator featuring a remote
// account waits behind a FeatureRequest that the other server accepts by the account's policy,
// with a FeatureAuthorization stamp it serves; the featured account is notified
// (`added_to_collection`), the curator's followers' server stores the collection from its Add
// (remote: `local: false`), learns an update (`collection_update` to the featured account), a
// revocation (Delete of the stamp) and a deletion (Remove); a non-discoverable account's server
// answers Reject.
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { settles, startFederatingPair, type FederatingPair, type Instance } from './support.ts';

jest.setTimeout(240_000);

const AP = { accept: 'application/activity+json' };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are checked field by field
const document = (url: string): Promise<any> => fetch(url, { headers: AP }).then((r) => r.json());

type Item = { id: string; account_id: string; state: string };

describe('collections between two instances', () => {
  let a: Instance;
  let b: Instance;
  let pair: FederatingPair | undefined;
  let alice: TestUser;
  let bob: TestUser;
  let shy: TestUser;
  /** Bob and shy as A knows them, alice as B knows her. */
  let bobOnA: string;
  let shyOnA: string;
  let aliceOnB: string;

  async function resolve(on: Instance, viewer: TestUser, handle: string): Promise<{ id: string }> {
    const res = await on.call(
      'GET',
      `/api/v2/search?resolve=true&type=accounts&q=${encodeURIComponent(handle)}`,
      viewer.token,
    );
    expect(res.status).toBe(200);
    expect(res.body.accounts).toHaveLength(1);
    return res.body.accounts[0];
  }

  beforeAll(async () => {
    // B reads remote accounts' collections in its replies (remote fetch) pipeline.
    pair = await startFederatingPair({ b: { extraPipelines: ['replies'] } });
    ({ a, b } = pair);
    alice = await createTestUser(a.core, { username: 'alice' });
    bob = await createTestUser(b.core, { username: 'bob' });
    shy = await createTestUser(b.core, { username: 'shy' });
    expect(
      (await b.call('PATCH', '/api/v1/accounts/update_credentials', bob.token, { discoverable: true })).status,
    ).toBe(200);
    expect(
      (await b.call('PATCH', '/api/v1/accounts/update_credentials', shy.token, { discoverable: false })).status,
    ).toBe(200);
    aliceOnB = (await resolve(b, bob, `@alice@${a.domain}`)).id;
    // Bob follows alice: B is among the servers her collections go to.
    expect((await b.call('POST', `/api/v1/accounts/${aliceOnB}/follow`, bob.token)).status).toBe(200);
    await settles(
      async () => {
        const rel = await b.call('GET', `/api/v1/accounts/relationships?id[]=${aliceOnB}`, bob.token);
        expect(rel.body[0].following).toBe(true);
      },
      30_000,
      'bob follows alice',
    );
    bobOnA = (await resolve(a, alice, `@bob@${b.domain}`)).id;
    shyOnA = (await resolve(a, alice, `@shy@${b.domain}`)).id;
  });

  afterAll(async () => {
    await pair?.close();
  });

  it('publishes featuredCollections and canFeature, and shows feature_approval per viewer', async () => {
    const actor = await document(`${a.url}/users/alice`);
    expect(actor.featuredCollections).toBe(`${a.url}/ap/users/${alice.account._id}/featured_collections`);
    expect(actor.interactionPolicy.canFeature.automaticApproval).toEqual([expect.any(String)]);
    const bobActor = await document(`${b.url}/users/bob`);
    expect(bobActor.interactionPolicy.canFeature.automaticApproval).toEqual([
      'https://www.w3.org/ns/activitystreams#Public',
    ]);
    const shyActor = await document(`${b.url}/users/shy`);
    expect(shyActor.interactionPolicy.canFeature.automaticApproval).toEqual([shyActor.id]);

    // A read bob's and shy's policies from their actors.
    const bobAcc = await a.call('GET', `/api/v1/accounts/${bobOnA}`, alice.token);
    expect(bobAcc.body.feature_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
    const anonymous = await a.call('GET', `/api/v1/accounts/${bobOnA}`);
    expect(anonymous.body.feature_approval.current_user).toBe('denied');
    const shyAcc = await a.call('GET', `/api/v1/accounts/${shyOnA}`, alice.token);
    expect(shyAcc.body.feature_approval).toEqual({ automatic: [], manual: [], current_user: 'missing' });
    expect(bobAcc.body).toMatchObject({ show_media: true, show_media_replies: true, show_featured: true });
  });

  it('FeatureRequest accepted with a stamp, the collection federated, updated, revoked and removed', async () => {
    const created = await a.call('POST', '/api/v1/collections', alice.token, {
      name: 'Friends far away',
      description: 'People on B',
      language: 'en',
      account_ids: [bobOnA],
    });
    expect(created.status).toBe(200);
    const coll = created.body.collection;
    expect(coll.items).toEqual([expect.objectContaining({ account_id: bobOnA, state: 'pending' })]);
    expect(coll.uri).toBe(`${a.url}/ap/users/${alice.account._id}/collections/${coll.id}`);

    // B accepts for bob (discoverable): A's item becomes accepted.
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/collections/${coll.id}`, alice.token);
        expect(res.body.collection.items[0].state).toBe('accepted');
      },
      30_000,
      'item accepted on A',
    );

    // A serves the collection with bob's stamp, which B serves naming the collection.
    const served = await document(coll.uri);
    expect(served).toMatchObject({
      id: coll.uri,
      type: 'FeaturedCollection',
      name: 'Friends far away',
      summaryMap: { en: 'People on B' },
      attributedTo: `${a.url}/users/alice`,
      totalItems: 1,
    });
    const item = served.orderedItems[0];
    expect(item).toMatchObject({
      type: 'FeaturedItem',
      featuredObject: `${b.url}/users/bob`,
      featuredObjectType: 'Person',
    });
    expect(item.featureAuthorization.startsWith(`${b.url}/ap/users/${bob.account._id}/feature_authorizations/`)).toBe(
      true,
    );
    const stamp = await document(item.featureAuthorization);
    expect(stamp).toMatchObject({
      type: 'FeatureAuthorization',
      interactingObject: coll.uri,
      interactionTarget: `${b.url}/users/bob`,
    });
    const list = await document(`${a.url}/ap/users/${alice.account._id}/featured_collections`);
    expect(list.orderedItems.map((c: { id: string }) => c.id)).toEqual([coll.uri]);
    for (const missing of [
      `${a.url}/ap/users/99999/featured_collections`,
      `${a.url}/ap/users/x/featured_collections`,
      `${a.url}/ap/users/${alice.account._id}/collections/99999`,
      `${a.url}/ap/users/${alice.account._id}/feature_authorizations/1`,
    ])
      expect((await fetch(missing, { headers: AP })).status).toBe(404);

    // Bob is told on B; B stores alice's collection from its Add, as a remote one.
    await settles(
      async () => {
        const res = await b.call('GET', '/api/v1/notifications?types[]=added_to_collection', bob.token);
        expect(res.body).toHaveLength(1);
        expect(res.body[0].account.id).toBe(aliceOnB);
        expect(res.body[0].collection.uri).toBe(coll.uri);
      },
      30_000,
      'added_to_collection on B',
    );
    const excluded = await b.call('GET', '/api/v1/notifications?exclude_types[]=added_to_collection', bob.token);
    expect(excluded.body.filter((n: { type: string }) => n.type === 'added_to_collection')).toEqual([]);
    const onB = await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/accounts/${aliceOnB}/collections`, bob.token);
        expect(res.body.collections).toHaveLength(1);
        expect(res.body.collections[0].items.filter((i: Item) => i.state === 'accepted')).toHaveLength(1);
        return res.body.collections[0];
      },
      30_000,
      "alice's collection on B",
    );
    expect(onB).toMatchObject({ uri: coll.uri, local: false, name: 'Friends far away', language: 'en' });
    expect(onB.items[0].account_id).toBe(String(bob.account._id));

    // An update reaches B and notifies bob there.
    expect(
      (await a.call('PATCH', `/api/v1/collections/${coll.id}`, alice.token, { name: 'Dear friends' })).status,
    ).toBe(200);
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/collections/${onB.id}`, bob.token);
        expect(res.body.collection.name).toBe('Dear friends');
        const notes = await b.call('GET', '/api/v1/notifications?types[]=collection_update', bob.token);
        expect(notes.body).toHaveLength(1);
        expect(notes.body[0].collection.name).toBe('Dear friends');
      },
      30_000,
      'update on B',
    );
    const grouped = await b.call('GET', '/api/v2/notifications?types[]=collection_update', bob.token);
    expect(grouped.body.notification_groups[0]).toMatchObject({
      type: 'collection_update',
      collection: { id: onB.id },
    });

    // Bob revokes his place on B: the stamp is deleted, A drops the item.
    const revoke = await b.call('POST', `/api/v1/collections/${onB.id}/items/${onB.items[0].id}/revoke`, bob.token);
    expect(revoke.status).toBe(200);
    expect((await fetch(item.featureAuthorization, { headers: AP })).status).toBe(404);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/collections/${coll.id}`, alice.token);
        expect(res.body.collection.items).toEqual([]);
      },
      30_000,
      'item gone on A',
    );

    // Alice deletes the collection: B removes it.
    expect((await a.call('DELETE', `/api/v1/collections/${coll.id}`, alice.token)).status).toBe(200);
    expect((await fetch(coll.uri, { headers: AP })).status).toBe(404);
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/accounts/${aliceOnB}/collections`, bob.token);
        expect(res.body.collections).toEqual([]);
      },
      30_000,
      'collection removed on B',
    );
  });

  it("reads a newly met account's collections from its featuredCollections", async () => {
    const carol = await createTestUser(a.core, { username: 'carol' });
    const dave = await createTestUser(a.core, { username: 'dave' });
    expect(
      (await a.call('PATCH', '/api/v1/accounts/update_credentials', dave.token, { discoverable: true })).status,
    ).toBe(200);
    const made = await a.call('POST', '/api/v1/collections', carol.token, {
      name: 'Neighbours',
      account_ids: [String(dave.account._id)],
    });
    expect(made.status).toBe(200);
    expect(made.body.collection.items[0].state).toBe('accepted');

    // B meets carol: her collection is read, dave verified by his stamp on A.
    const carolOnB = (await resolve(b, bob, `@carol@${a.domain}`)).id;
    const daveOnB = (await resolve(b, bob, `@dave@${a.domain}`)).id;
    const stored = await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/accounts/${carolOnB}/collections`, bob.token);
        expect(res.body.collections).toHaveLength(1);
        expect(res.body.collections[0].items).toHaveLength(1);
        return res.body.collections[0];
      },
      30_000,
      "carol's collection on B",
    );
    expect(stored).toMatchObject({ uri: made.body.collection.uri, name: 'Neighbours', local: false });
    expect(stored.items[0]).toMatchObject({ account_id: daveOnB, state: 'accepted' });
    // dave is listed as featured in it on B.
    const featuring = await b.call('GET', `/api/v1/accounts/${daveOnB}/in_collections`, bob.token);
    expect(featuring.status).toBe(200);
    expect(featuring.body.collections.map((c: { id: string }) => c.id)).toEqual([stored.id]);
  });

  it('refuses an account whose server publishes no consent, and a server rejects what its policy denies', async () => {
    const refused = await a.call('POST', '/api/v1/collections', alice.token, { name: 'Shy', account_ids: [shyOnA] });
    expect(refused.status).toBe(422);

    // A FeatureRequest for shy, sent anyway (as a server that ignores the policy would), is rejected.
    const coll = await a.call('POST', '/api/v1/collections', alice.token, { name: 'Shy again' });
    expect(coll.status).toBe(200);
    await collection(a.core.db, accounts).updateOne(
      { _id: BigInt(shyOnA) },
      { $set: { featurePolicy: { automatic: ['public'], manual: [] } } },
    );
    const added = await a.call('POST', `/api/v1/collections/${coll.body.collection.id}/items`, alice.token, {
      account_id: shyOnA,
    });
    expect(added.status).toBe(200);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/collections/${coll.body.collection.id}`, alice.token);
        expect(res.body.collection.items[0].state).toBe('rejected');
      },
      30_000,
      'item rejected on A',
    );
  });
});
