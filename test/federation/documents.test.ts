// Our ActivityPub documents as another server sees them: WebFinger (both domains of a split
// set-up, CORS, errors), host-meta, actors with content negotiation, statuses by visibility
// (signed requests from followers see followers-only posts), collections and the instance actor.
import { createPrivateKey } from 'node:crypto';
import { startTestApi, type TestApi } from '../support/api.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { postStatus } from '../../services/core/statuses/postStatus.ts';
import { signRequest } from '../../services/core/activitypub/httpSignatures.ts';
import { generateActorKeyPair } from '../../services/core/accounts/keys.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts, type AccountDoc } from '../../services/core/model/accounts.ts';
import { recordFollow } from '../../services/core/graph/relations.ts';
import { statuses } from '../../services/core/model/statuses.ts';

const AP = 'application/activity+json';

describe('ActivityPub documents', () => {
  let api: TestApi;
  let alice: TestUser;
  let remote: AccountDoc;
  let remoteKey: ReturnType<typeof createPrivateKey>;
  const base = 'https://social.example';

  beforeAll(async () => {
    api = await startTestApi({ LOCAL_DOMAIN: 'example.test', WEB_DOMAIN: 'social.example' });
    alice = await createTestUser(api.core, { username: 'alice' });
    const keys = await generateActorKeyPair();
    remoteKey = createPrivateKey(keys.privateKeyPem);
    remote = {
      ...alice.account,
      _id: 999_999n,
      username: 'bob',
      usernameLower: 'bob',
      domain: 'remote.example',
      uri: 'https://remote.example/users/bob',
      url: 'https://remote.example/@bob',
      inboxUrl: 'https://remote.example/users/bob/inbox',
      sharedInboxUrl: null,
      followersUrl: 'https://remote.example/users/bob/followers',
      publicKeyPem: keys.publicKeyPem,
      privateKeyPem: null,
      keyId: 'https://remote.example/users/bob#main-key',
      lastFetchedAt: new Date(),
    };
    await collection(api.core.db, accounts).insertOne(remote);
  });
  afterAll(async () => api.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${api.server.url}${path}`, { headers, redirect: 'manual' });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are checked field by field
  const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

  const signedGet = (path: string) => {
    const headers = signRequest({
      method: 'GET',
      url: `${api.server.url}${path}`,
      headers: { accept: AP },
      key: { keyId: 'https://remote.example/users/bob#main-key', privateKey: remoteKey },
    });
    return get(path, headers);
  };

  it('answers WebFinger for acct on LOCAL_DOMAIN and WEB_DOMAIN, and for the actor URL', async () => {
    for (const resource of [
      'acct:alice@example.test',
      'alice@social.example',
      `${base}/users/alice`,
      `${base}/@alice`,
      'acct:ALICE@example.test',
    ]) {
      const res = await get(`/.well-known/webfinger?resource=${encodeURIComponent(resource)}`, { origin: 'https://x' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/jrd\+json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const body = await json(res);
      expect(body.subject).toBe('acct:alice@example.test');
      expect(body.aliases).toEqual([`${base}/@alice`, `${base}/users/alice`]);
      expect(body.links).toContainEqual({ rel: 'self', type: AP, href: `${base}/users/alice` });
    }
    expect((await get('/.well-known/webfinger?resource=acct:nobody@example.test')).status).toBe(404);
    expect((await get('/.well-known/webfinger?resource=acct:alice@elsewhere.example')).status).toBe(404);
    expect((await get('/.well-known/webfinger')).status).toBe(400);
    expect((await get('/.well-known/webfinger?resource=garbage')).status).toBe(400);
    const instance = await json(get('/.well-known/webfinger?resource=acct:example.test@example.test'));
    expect(instance.links).toContainEqual({ rel: 'self', type: AP, href: `${base}/actor` });
  });

  it('serves host-meta as XML and JSON', async () => {
    const xml = await get('/.well-known/host-meta');
    expect(xml.headers.get('content-type')).toMatch(/^application\/xrd\+xml/);
    expect(await xml.text()).toContain(`template="${base}/.well-known/webfinger?resource={uri}"`);
    const hostMeta = await json(get('/.well-known/host-meta', { accept: 'application/json' }));
    expect(hostMeta.links[0]).toEqual({ rel: 'lrdd', template: `${base}/.well-known/webfinger?resource={uri}` });
  });

  it('serves the actor as activity+json and redirects browsers', async () => {
    const res = await get('/users/alice', { accept: AP });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/activity+json; charset=utf-8');
    const actor = await json(res);
    expect(actor).toMatchObject({
      id: `${base}/users/alice`,
      type: 'Person',
      preferredUsername: 'alice',
      inbox: `${base}/users/alice/inbox`,
      endpoints: { sharedInbox: `${base}/inbox` },
      publicKey: { id: `${base}/users/alice#main-key`, owner: `${base}/users/alice` },
    });
    expect(actor.publicKey.publicKeyPem).toMatch(/BEGIN PUBLIC KEY/);
    const ld = await get('/users/alice', {
      accept: 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
    });
    expect(ld.status).toBe(200);
    const html = await get('/users/alice', { accept: 'text/html' });
    expect(html.status).toBe(301);
    expect(html.headers.get('location')).toBe('/@alice');
    expect((await get('/@alice', { accept: 'text/html' })).headers.get('link')).toContain(`<${base}/users/alice>`);
    expect((await get('/users/nobody', { accept: AP })).status).toBe(404);
    const instanceActor = await json(get('/actor', { accept: AP }));
    expect(instanceActor).toMatchObject({ id: `${base}/actor`, type: 'Application' });
  });

  it('serves statuses by visibility; followers-only ones to signed followers only', async () => {
    const pub = await postStatus(api.core, alice.account, { text: 'hello #world', visibility: 'public' });
    const priv = await postStatus(api.core, alice.account, { text: 'secret', visibility: 'private' });
    const note = await json(get(`/users/alice/statuses/${pub._id}`, { accept: AP }));
    expect(note).toMatchObject({
      id: `${base}/users/alice/statuses/${pub._id}`,
      type: 'Note',
      attributedTo: `${base}/users/alice`,
      to: ['https://www.w3.org/ns/activitystreams#Public'],
      cc: [`${base}/users/alice/followers`],
    });
    expect(note.tag).toContainEqual({ type: 'Hashtag', href: `${base}/tags/world`, name: '#world' });
    const create = await json(get(`/users/alice/statuses/${pub._id}/activity`, { accept: AP }));
    expect(create).toMatchObject({ type: 'Create', id: `${base}/users/alice/statuses/${pub._id}/activity` });
    expect((await get(`/users/alice/statuses/${priv._id}`, { accept: AP })).status).toBe(404);
    expect((await signedGet(`/users/alice/statuses/${priv._id}`)).status).toBe(404);
    await recordFollow(api.core, remote._id, alice.account._id);
    const seen = await signedGet(`/users/alice/statuses/${priv._id}`);
    expect(seen.status).toBe(200);
    expect((await json(seen)).to).toEqual([`${base}/users/alice/followers`]);
    // A forged signature is refused outright.
    const forged = await get(`/users/alice/statuses/${pub._id}`, {
      accept: AP,
      date: new Date().toUTCString(),
      signature:
        'keyId="https://remote.example/users/bob#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="AAAA"',
    });
    expect(forged.status).toBe(401);
  });

  it('serves outbox, followers and featured collections', async () => {
    const outbox = await json(get('/users/alice/outbox', { accept: AP }));
    expect(outbox).toMatchObject({ type: 'OrderedCollection', first: `${base}/users/alice/outbox?page=true` });
    const page = await json(get('/users/alice/outbox?page=true', { accept: AP }));
    expect(page.type).toBe('OrderedCollectionPage');
    expect(page.orderedItems.length).toBeGreaterThan(0);
    expect(page.orderedItems.every((i: { type: string; object: { to: string[] } }) => i.type === 'Create')).toBe(true);
    const followers = await json(get('/users/alice/followers', { accept: AP }));
    expect(followers).toMatchObject({ type: 'OrderedCollection', first: `${base}/users/alice/followers?page=1` });
    const fpage = await json(get('/users/alice/followers?page=1', { accept: AP }));
    expect(fpage.orderedItems).toEqual(['https://remote.example/users/bob']);
    const featured = await json(get('/users/alice/collections/featured', { accept: AP }));
    expect(featured).toMatchObject({ type: 'OrderedCollection', totalItems: 0, orderedItems: [] });
    const tags = await json(get('/users/alice/collections/tags', { accept: AP }));
    expect(tags).toMatchObject({ type: 'Collection', items: [] });
  });

  it("serves replies as Mastodon pages them: own replies, then other accounts' (local embedded, remote as ids)", async () => {
    const carol = await createTestUser(api.core, { username: 'carol' });
    const root = await postStatus(api.core, alice.account, { text: 'thread root', visibility: 'public' });
    const self1 = await postStatus(api.core, alice.account, { text: 'one', inReplyToId: root._id });
    const self2 = await postStatus(api.core, alice.account, {
      text: 'two',
      inReplyToId: root._id,
      visibility: 'unlisted',
    });
    await postStatus(api.core, alice.account, { text: 'hidden', inReplyToId: root._id, visibility: 'private' });
    const other = await postStatus(api.core, carol.account, { text: 'from carol', inReplyToId: root._id });
    // A remote reply is listed by its id.
    const remoteReply = {
      ...other,
      _id: other._id + 1n,
      accountId: remote._id,
      local: false,
      uri: 'https://remote.example/users/bob/statuses/1',
      uniqueKey: 'remote-reply-1',
    };
    await collection(api.core.db, statuses).insertOne(remoteReply);
    const replies = `${base}/users/alice/statuses/${root._id}/replies`;

    // The Note embeds the first page: up to 5 own replies, `next` after the last of them.
    const note = await json(get(`/users/alice/statuses/${root._id}`, { accept: AP }));
    expect(note.replies).toEqual({
      id: replies,
      type: 'Collection',
      first: {
        type: 'CollectionPage',
        next: `${replies}?min_id=${self2._id}&page=true`,
        partOf: replies,
        items: [self1.uri, self2.uri],
      },
    });

    // The collection: own replies embedded as Notes; the next page is other accounts'.
    const coll = await json(get(`/users/alice/statuses/${root._id}/replies`, { accept: AP }));
    expect(coll).toMatchObject({ id: replies, type: 'Collection' });
    expect(coll.first).toMatchObject({
      id: `${replies}?page=true`,
      type: 'CollectionPage',
      partOf: replies,
      next: `${replies}?only_other_accounts=true&page=true`,
    });
    expect(coll.first.items.map((i: { id: string; type: string }) => [i.id, i.type])).toEqual([
      [self1.uri, 'Note'],
      [self2.uri, 'Note'],
    ]);

    // What GoToSocial and Mastodon follow from the Note: a CollectionPage of other accounts' replies.
    const res = await get(`/users/alice/statuses/${root._id}/replies?only_other_accounts=true&page=true`, {
      accept: AP,
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/activity\+json/);
    const page = await json(res);
    expect(page).toMatchObject({
      id: `${replies}?only_other_accounts=true&page=true`,
      type: 'CollectionPage',
      partOf: replies,
    });
    expect(page.next).toBeUndefined();
    expect(page.items[0]).toMatchObject({ id: other.uri, type: 'Note', attributedTo: `${base}/users/carol` });
    expect(page.items[1]).toBe(remoteReply.uri);
    const after = await json(
      get(`/users/alice/statuses/${root._id}/replies?only_other_accounts=true&page=true&min_id=${other._id}`, {
        accept: AP,
      }),
    );
    expect(after).toMatchObject({
      id: `${replies}?min_id=${other._id}&only_other_accounts=true&page=true`,
      items: [remoteReply.uri],
    });

    // A suspended author's replies are left out; a status nobody may see is 404.
    await collection(api.core.db, accounts).updateOne({ _id: remote._id }, { $set: { suspendedAt: new Date() } });
    const without = await json(
      get(`/users/alice/statuses/${root._id}/replies?only_other_accounts=true&page=true`, { accept: AP }),
    );
    expect(without.items).toHaveLength(1);
    await collection(api.core.db, accounts).updateOne({ _id: remote._id }, { $set: { suspendedAt: null } });
    const priv = await postStatus(api.core, alice.account, { text: 'private root', visibility: 'private' });
    expect((await get(`/users/alice/statuses/${priv._id}/replies?page=true`, { accept: AP })).status).toBe(404);
  });

  it('pages a long run of own replies by min_id, then moves on to other accounts', async () => {
    const root = await postStatus(api.core, alice.account, { text: 'long thread', visibility: 'public' });
    const own = [];
    for (let i = 0; i < 61; i++)
      own.push(await postStatus(api.core, alice.account, { text: `part ${i}`, inReplyToId: root._id }));
    const replies = `${base}/users/alice/statuses/${root._id}/replies`;
    const first = await json(get(`/users/alice/statuses/${root._id}/replies?page=true`, { accept: AP }));
    expect(first.items).toHaveLength(60);
    expect(first.next).toBe(`${replies}?min_id=${own[59]._id}&only_other_accounts=false&page=true`);
    const second = await json(get(first.next.replace(base, ''), { accept: AP }));
    expect(second.items.map((i: { id: string }) => i.id)).toEqual([own[60].uri]);
    expect(second.next).toBe(`${replies}?only_other_accounts=true&page=true`);
  }, 60_000);
});

describe('AUTHORIZED_FETCH', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ LOCAL_DOMAIN: 'example.test', AUTHORIZED_FETCH: 'true' });
    await createTestUser(api.core, { username: 'carol' });
  });
  afterAll(async () => api.close());

  it('refuses unsigned ActivityPub GETs, but not the instance actor or WebFinger', async () => {
    const get = (path: string) => fetch(`${api.server.url}${path}`, { headers: { accept: AP } });
    expect((await get('/users/carol')).status).toBe(401);
    expect((await get('/users/carol/outbox')).status).toBe(401);
    expect((await get('/actor')).status).toBe(200);
    expect((await get('/.well-known/webfinger?resource=acct:carol@example.test')).status).toBe(200);
  });
});
