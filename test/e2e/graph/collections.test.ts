// Collections (Mastodon 4.6) over HTTP: create with accounts, read (the curator sees every item,
// others the accepted ones), update, delete; add and remove accounts as the feature policy
// allows (local discoverable accounts consent automatically); a featured account revokes its
// place; an account's collections and those it is featured in; scopes and ownership; and the
// masto client library's own collections flow.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { runNodeForJson } from '../../support/processes.ts';

let api: TestApi;
let core: Core;
let curator: TestUser, star: TestUser, shy: TestUser, reader: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const id = (u: TestUser) => String(u.account._id);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  [curator, star, shy, reader] = await Promise.all(Array.from({ length: 4 }, () => createTestUser(core)));
  // Discoverable accounts may be featured; `shy` is not.
  for (const [u, discoverable] of [
    [star, true],
    [reader, true],
    [shy, false],
  ] as const)
    expect((await call('PATCH', '/api/v1/accounts/update_credentials', u.token, { discoverable })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
});

type Item = { id: string; account_id: string; state: string };
type Coll = { id: string; account_id: string; name: string; items: Item[]; item_count: number };

test('create, read, update and delete a collection with featured accounts', async () => {
  const created = await call('POST', '/api/v1/collections', curator.token, {
    name: 'Nice accounts',
    description: 'These accounts are very nice',
    language: 'en',
    tag_name: '#accounts',
    sensitive: false,
    discoverable: true,
    account_ids: [id(star)],
  });
  expect(created.status).toBe(200);
  const c = created.body.collection;
  expect(c).toMatchObject({
    account_id: id(curator),
    name: 'Nice accounts',
    description: 'These accounts are very nice',
    language: 'en',
    local: true,
    sensitive: false,
    discoverable: true,
    tag: { name: 'accounts', url: expect.stringMatching(/\/tags\/accounts$/) },
    item_count: 1,
    items: [{ id: expect.any(String), account_id: id(star), state: 'accepted', created_at: expect.any(String) }],
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect(c.uri).toMatch(/^http/);

  // Anyone reads it (no token too), with the curator's and the items' accounts.
  const read = await call('GET', `/api/v1/collections/${c.id}`);
  expect(read.status).toBe(200);
  expect(read.body.collection.id).toBe(c.id);
  expect((read.body.accounts as { id: string }[]).map((a) => a.id).sort()).toEqual([id(curator), id(star)].sort());

  const patched = await call('PATCH', `/api/v1/collections/${c.id}`, curator.token, {
    name: 'Nicer accounts',
    tag_name: null,
    sensitive: true,
  });
  expect(patched.status).toBe(200);
  expect(patched.body.collection).toMatchObject({
    name: 'Nicer accounts',
    description: 'These accounts are very nice',
    tag: null,
    sensitive: true,
    item_count: 1,
  });
  // Someone else's collection: 403, as Mastodon; unknown: 404.
  expect((await call('PATCH', `/api/v1/collections/${c.id}`, reader.token, { name: 'mine' })).status).toBe(403);
  expect((await call('DELETE', `/api/v1/collections/${c.id}`, reader.token)).status).toBe(403);
  expect((await call('GET', '/api/v1/collections/999999999')).status).toBe(404);

  expect((await call('DELETE', `/api/v1/collections/${c.id}`, curator.token)).body).toEqual({});
  expect((await call('GET', `/api/v1/collections/${c.id}`)).status).toBe(404);
});

test('validation and scopes answer as Mastodon', async () => {
  const long = await call('POST', '/api/v1/collections', curator.token, { name: 'x'.repeat(41) });
  expect(long.status).toBe(422);
  expect(long.body).toEqual({
    error: 'Validation failed: Name is too long (maximum is 40 characters)',
    details: { name: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 40 characters)' }] },
  });
  const blank = await call('POST', '/api/v1/collections', curator.token, { description: 'no name' });
  expect(blank.status).toBe(422);
  expect(blank.body.details.name[0].error).toBe('ERR_BLANK');
  expect(
    (await call('POST', '/api/v1/collections', curator.token, { name: 'n', description: 'd'.repeat(101) })).status,
  ).toBe(422);
  // A non-discoverable account cannot be featured: nothing is created.
  const refused = await call('POST', '/api/v1/collections', curator.token, { name: 'Shy', account_ids: [id(shy)] });
  expect(refused.status).toBe(422);
  expect((await call('GET', `/api/v1/accounts/${id(curator)}/collections`, curator.token)).body.collections).toEqual(
    [],
  );
  expect((await call('POST', '/api/v1/collections', null, { name: 'anon' })).status).toBe(401);
  const readOnly = await createTestUser(core, { scopes: ['read'] });
  expect((await call('POST', '/api/v1/collections', readOnly.token, { name: 'ro' })).status).toBe(403);
  const scoped = await createTestUser(core, { scopes: ['read:collections', 'write:collections'] });
  expect((await call('POST', '/api/v1/collections', scoped.token, { name: 'scoped' })).status).toBe(200);
});

test('items: add, remove, revoke; listings of an account and of where it is featured', async () => {
  const made = await call('POST', '/api/v1/collections', curator.token, { name: 'Friends', discoverable: true });
  const cid = made.body.collection.id as string;
  const hidden = await call('POST', '/api/v1/collections', curator.token, { name: 'Drafts', discoverable: false });
  const hid = hidden.body.collection.id as string;

  const added = await call('POST', `/api/v1/collections/${cid}/items`, curator.token, { account_id: id(star) });
  expect(added.status).toBe(200);
  expect(added.body.collection_item).toMatchObject({ account_id: id(star), state: 'accepted' });
  const again = await call('POST', `/api/v1/collections/${cid}/items`, curator.token, { account_id: id(star) });
  expect(again.body.collection_item.id).toBe(added.body.collection_item.id);
  expect((await call('POST', `/api/v1/collections/${hid}/items`, curator.token, { account_id: id(star) })).status).toBe(
    200,
  );
  expect((await call('POST', `/api/v1/collections/${cid}/items`, curator.token, { account_id: id(shy) })).status).toBe(
    422,
  );
  expect((await call('POST', `/api/v1/collections/${cid}/items`, curator.token, {})).status).toBe(422);
  expect(
    (await call('POST', `/api/v1/collections/${cid}/items`, reader.token, { account_id: id(reader) })).status,
  ).toBe(403);
  const readerItem = await call('POST', `/api/v1/collections/${cid}/items`, curator.token, { account_id: id(reader) });

  // The curator's listing holds both; others see only the discoverable one.
  const names = async (token: string | null, path: string) =>
    ((await call('GET', path, token)).body.collections as Coll[]).map((c) => c.name);
  expect(await names(curator.token, `/api/v1/accounts/${id(curator)}/collections`)).toEqual(['Drafts', 'Friends']);
  expect(await names(null, `/api/v1/accounts/${id(curator)}/collections`)).toEqual(['Friends']);
  expect(await names(star.token, `/api/v1/accounts/${id(star)}/in_collections`)).toEqual(['Friends']);
  expect(await names(curator.token, `/api/v1/accounts/${id(star)}/in_collections`)).toEqual(['Drafts', 'Friends']);
  const list = await call('GET', `/api/v1/accounts/${id(curator)}/collections`);
  expect((list.body.partial_accounts as { id: string }[]).map((a) => a.id).sort()).toEqual(
    [id(curator), id(star), id(reader)].sort(),
  );
  // Offset pagination with a Link header.
  const page = await call('GET', `/api/v1/accounts/${id(curator)}/collections?limit=1`, curator.token);
  expect((page.body.collections as Coll[]).map((c) => c.name)).toEqual(['Drafts']);
  expect(page.headers.get('link')).toMatch(/offset=1.*rel="next"/);
  const next = await call('GET', `/api/v1/accounts/${id(curator)}/collections?limit=1&offset=1`, curator.token);
  expect((next.body.collections as Coll[]).map((c) => c.name)).toEqual(['Friends']);

  // The featured account revokes its place: others no longer see it, the curator sees it revoked.
  const starItem = added.body.collection_item.id as string;
  expect((await call('POST', `/api/v1/collections/${cid}/items/${starItem}/revoke`, reader.token)).status).toBe(403);
  expect((await call('POST', `/api/v1/collections/${cid}/items/${starItem}/revoke`, star.token)).body).toEqual({});
  const publicView = (await call('GET', `/api/v1/collections/${cid}`)).body.collection as Coll;
  expect(publicView.items.map((i) => i.account_id)).toEqual([id(reader)]);
  const ownerView = (await call('GET', `/api/v1/collections/${cid}`, curator.token)).body.collection as Coll;
  expect(ownerView.items.map((i) => [i.account_id, i.state])).toEqual([
    [id(star), 'revoked'],
    [id(reader), 'accepted'],
  ]);
  expect(await names(null, `/api/v1/accounts/${id(star)}/in_collections`)).toEqual([]);
  // Put back by the curator: refused once revoked.
  expect((await call('POST', `/api/v1/collections/${cid}/items`, curator.token, { account_id: id(star) })).status).toBe(
    422,
  );

  // The curator removes an item; a viewer who blocks a featured account does not see it.
  expect(
    (await call('DELETE', `/api/v1/collections/${cid}/items/${readerItem.body.collection_item.id}`, curator.token))
      .body,
  ).toEqual({});
  expect(((await call('GET', `/api/v1/collections/${cid}`)).body.collection as Coll).items).toEqual([]);
  expect((await call('DELETE', `/api/v1/collections/${cid}/items/999`, curator.token)).status).toBe(404);
  const blocker = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${id(star)}/block`, blocker.token);
  const h = (await call('GET', `/api/v1/collections/${hid}`, blocker.token)).body.collection as Coll;
  expect(h.items).toEqual([]);
  expect(((await call('GET', `/api/v1/collections/${hid}`, reader.token)).body.collection as Coll).items).toHaveLength(
    1,
  );
});

test('the masto client library runs its own collections flow', async () => {
  const alice = await createTestUser(core);
  const seen = await runNodeForJson('test/e2e/graph/mastoCollectionsFlow.ts', [api.server.url, alice.token, id(alice)]);
  expect(seen.createdName).toBe('My collection');
  expect(seen.fetchedName).toBe('My collection');
  expect(seen.fetchedAccounts).toEqual([id(alice)]);
  expect(seen.updated.name).toBe('My collection 2');
  expect(seen.listed).toContainEqual(seen.updated);
  expect(seen.inCollections).toEqual([]);
  expect(seen.afterRemove).toEqual([]);
});
