// Collections (Mastodon 4.6) on one server, through the real pipeline: adding a local account
// notifies it (`added_to_collection`, with the collection), updating the collection notifies the
// accounts it features (`collection_update`), never the curator; the types filter and grouped
// notifications know both types. `feature_approval` on the Account entity per viewer, also on the
// authors of statuses (the cached entity with the viewer's outcome laid over).
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let curator: TestUser, star: TestUser, shy: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const id = (u: TestUser) => String(u.account._id);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  [curator, star, shy] = await Promise.all(Array.from({ length: 3 }, () => createTestUser(core)));
  for (const [u, discoverable] of [
    [star, true],
    [shy, false],
  ] as const)
    expect((await call('PATCH', '/api/v1/accounts/update_credentials', u.token, { discoverable })).status).toBe(200);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

test('feature_approval per viewer, on accounts and on status authors', async () => {
  const asCurator = await call('GET', `/api/v1/accounts/${id(star)}`, curator.token);
  expect(asCurator.body.feature_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
  expect((await call('GET', `/api/v1/accounts/${id(star)}`)).body.feature_approval.current_user).toBe('denied');
  const shyAcc = await call('GET', `/api/v1/accounts/${id(shy)}`, curator.token);
  expect(shyAcc.body.feature_approval).toEqual({ automatic: [], manual: [], current_user: 'denied' });
  const own = await call('GET', '/api/v1/accounts/verify_credentials', star.token);
  expect(own.body.feature_approval.current_user).toBe('automatic');
  expect(own.body).toMatchObject({ show_media: true, show_media_replies: true, show_featured: true });
  const many = await call('GET', `/api/v1/accounts?id[]=${id(star)}&id[]=${id(shy)}`, curator.token);
  expect(many.body.map((a: { feature_approval: { current_user: string } }) => a.feature_approval.current_user)).toEqual(
    ['automatic', 'denied'],
  );

  // Where clients find accounts to feature: search results and follow lists, per viewer too.
  const found = await call(
    'GET',
    `/api/v2/search?type=accounts&q=${encodeURIComponent(star.account.username)}`,
    curator.token,
  );
  expect(found.status).toBe(200);
  expect(found.body.accounts[0]).toMatchObject({ id: id(star), feature_approval: { current_user: 'automatic' } });
  expect((await call('POST', `/api/v1/accounts/${id(star)}/follow`, curator.token)).status).toBe(200);
  const following = await call('GET', `/api/v1/accounts/${id(curator)}/following`, curator.token);
  expect(
    following.body.map((a: { feature_approval: { current_user: string } }) => a.feature_approval.current_user),
  ).toEqual(['automatic']);

  // A locked account is featured by its followers' consent as Mastodon renders it.
  expect((await call('PATCH', '/api/v1/accounts/update_credentials', star.token, { locked: true })).status).toBe(200);
  const locked = await call('GET', `/api/v1/accounts/${id(star)}`, curator.token);
  expect(locked.body.feature_approval.automatic).toEqual(['followers']);
  expect((await call('PATCH', '/api/v1/accounts/update_credentials', star.token, { locked: false })).status).toBe(200);

  // The author of a status: the same entity, with the viewer's outcome.
  const posted = await call('POST', '/api/v1/statuses', star.token, { status: 'featured soon' });
  expect(posted.status).toBe(200);
  const seen = await call('GET', `/api/v1/statuses/${posted.body.id}`, curator.token);
  expect(seen.body.account.feature_approval.current_user).toBe('automatic');
  const anonymous = await call('GET', `/api/v1/statuses/${posted.body.id}`);
  expect(anonymous.body.account.feature_approval.current_user).toBe('denied');
});

test('added_to_collection and collection_update, filtered by type and grouped', async () => {
  const created = await call('POST', '/api/v1/collections', curator.token, { name: 'Stars', account_ids: [id(star)] });
  expect(created.status).toBe(200);
  const collectionId = created.body.collection.id;
  expect(
    (await call('POST', '/api/v1/collections', curator.token, { name: 'No', account_ids: [id(shy)] })).status,
  ).toBe(422);

  const added = await eventually(async () => {
    const res = await call('GET', '/api/v1/notifications?types[]=added_to_collection', star.token);
    return res.body.length === 1 ? res.body[0] : undefined;
  });
  expect(added).toMatchObject({
    type: 'added_to_collection',
    account: { id: id(curator) },
    collection: { id: collectionId, name: 'Stars', items: [expect.objectContaining({ account_id: id(star) })] },
  });

  expect(
    (await call('PATCH', `/api/v1/collections/${collectionId}`, curator.token, { name: 'Bright stars' })).status,
  ).toBe(200);
  expect(
    (await call('PATCH', `/api/v1/collections/${collectionId}`, curator.token, { description: 'twice' })).status,
  ).toBe(200);
  const updates = await eventually(async () => {
    const res = await call('GET', '/api/v1/notifications?types[]=collection_update', star.token);
    return res.body.length === 2 ? res.body : undefined;
  });
  expect(updates[0]).toMatchObject({
    type: 'collection_update',
    collection: { id: collectionId, name: 'Bright stars' },
  });

  // (star also has the curator's follow of the first test.)
  const others = await call('GET', '/api/v1/notifications?exclude_types[]=collection_update', star.token);
  expect(others.body.map((n: { type: string }) => n.type)).toEqual(['added_to_collection', 'follow']);
  const grouped = await call('GET', '/api/v2/notifications?exclude_types[]=follow', star.token);
  expect(grouped.body.notification_groups.map((g: { type: string }) => g.type)).toEqual([
    'collection_update',
    'collection_update',
    'added_to_collection',
  ]);
  expect(grouped.body.notification_groups[2].collection.id).toBe(collectionId);
  // The curator is told nothing about its own collection.
  const mine = await call('GET', '/api/v1/notifications', curator.token);
  expect(mine.body.filter((n: { type: string }) => n.type.includes('collection'))).toEqual([]);

  // Once the collection is gone, its notifications are not shown.
  expect((await call('DELETE', `/api/v1/collections/${collectionId}`, curator.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/notifications?exclude_types[]=follow', star.token)).body).toEqual([]);
});
