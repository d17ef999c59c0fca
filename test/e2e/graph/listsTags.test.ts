// Lists and followed hashtags over HTTP.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';

let api: TestApi;
let core: Core;

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
});

afterAll(async () => {
  await api?.close();
});

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

test('lists: create, validate, add followed accounts only, list members, unfollow removes, delete', async () => {
  const owner = await createTestUser(core);
  const friend = await createTestUser(core);
  const other = await createTestUser(core);
  const intruder = await createTestUser(core);
  expect((await call('POST', '/api/v1/lists', owner.token, { title: '  ' })).status).toBe(422);
  expect((await call('POST', '/api/v1/lists', owner.token, { title: 'x', replies_policy: 'everyone' })).status).toBe(
    422,
  );
  const created = await call('POST', '/api/v1/lists', owner.token, { title: 'Friends', exclusive: true });
  expect(created.body).toMatchObject({ title: 'Friends', replies_policy: 'list', exclusive: true });
  const id = created.body.id;

  expect(
    (await call('POST', `/api/v1/lists/${id}/accounts`, owner.token, { account_ids: [String(friend.account._id)] }))
      .status,
  ).toBe(422);
  await call('POST', `/api/v1/accounts/${friend.account._id}/follow`, owner.token);
  await call('POST', `/api/v1/accounts/${other.account._id}/follow`, owner.token);
  const added = await call('POST', `/api/v1/lists/${id}/accounts`, owner.token, {
    account_ids: [String(friend.account._id), String(other.account._id)],
  });
  expect(added.status).toBe(200);
  const members = await call('GET', `/api/v1/lists/${id}/accounts?limit=0`, owner.token);
  expect(members.body.map((a: { id: string }) => a.id).sort()).toEqual(
    [String(friend.account._id), String(other.account._id)].sort(),
  );
  expect(
    (await call('GET', `/api/v1/accounts/${friend.account._id}/lists`, owner.token)).body.map(
      (l: { id: string }) => l.id,
    ),
  ).toEqual([id]);
  expect((await call('GET', `/api/v1/lists/${id}`, intruder.token)).status).toBe(404);
  expect((await call('GET', '/api/v1/lists/abc', owner.token)).status).toBe(404);

  const updated = await call('PUT', `/api/v1/lists/${id}`, owner.token, {
    title: 'Close friends',
    replies_policy: 'followed',
  });
  expect(updated.body).toMatchObject({ title: 'Close friends', replies_policy: 'followed', exclusive: true });
  await call('POST', `/api/v1/accounts/${other.account._id}/unfollow`, owner.token);
  expect(
    (await call('GET', `/api/v1/lists/${id}/accounts`, owner.token)).body.map((a: { id: string }) => a.id),
  ).toEqual([String(friend.account._id)]);
  expect(
    (await call('DELETE', `/api/v1/lists/${id}/accounts?account_ids[]=${friend.account._id}`, owner.token)).status,
  ).toBe(200);
  expect((await call('GET', `/api/v1/lists/${id}/accounts`, owner.token)).body).toEqual([]);
  expect((await call('GET', '/api/v1/lists', owner.token)).body).toHaveLength(1);
  expect((await call('DELETE', `/api/v1/lists/${id}`, owner.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/lists', owner.token)).body).toEqual([]);
  expect(api.published.some((e) => e.type === 'ListMembersChanged' && e.payload.added === false)).toBe(true);
  const ofList = (type: string) => api.published.filter((e) => e.type === type && e.payload.listId === id);
  expect(ofList('ListCreated').map((e) => e.payload)).toEqual([
    { listId: id, ownerId: String(owner.account._id), title: 'Friends', repliesPolicy: 'list', exclusive: true },
  ]);
  expect(ofList('ListUpdated').map((e) => e.payload)).toEqual([
    {
      listId: id,
      ownerId: String(owner.account._id),
      title: 'Close friends',
      repliesPolicy: 'followed',
      exclusive: true,
    },
  ]);
  expect(ofList('ListDeleted')).toHaveLength(1);
});

test('followed tags: idempotent, case-insensitive, percent-encoded names, paginated', async () => {
  const user = await createTestUser(core);
  const first = await call('POST', '/api/v1/tags/Caf%C3%A9/follow', user.token);
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ name: 'Café', following: true });
  expect((await call('POST', '/api/v1/tags/CAFÉ/follow'.replace('É', '%C3%89'), user.token)).body.id).toBe(
    first.body.id,
  );
  const read = await call('GET', '/api/v1/tags/caf%C3%A9', user.token);
  expect(read.body).toMatchObject({ id: first.body.id, following: true });
  await call('POST', '/api/v1/tags/rust/follow', user.token);
  const page = await call('GET', '/api/v1/followed_tags?limit=1', user.token);
  expect(page.body.map((t: { name: string }) => t.name)).toEqual(['rust']);
  expect(page.headers.get('link')).toContain('rel="next"');
  const all = await call('GET', '/api/v1/followed_tags', user.token);
  expect(all.body.map((t: { name: string }) => t.name).sort()).toEqual(['Café', 'rust']);
  expect((await call('POST', '/api/v1/tags/rust/unfollow', user.token)).body.following).toBe(false);
  expect((await call('POST', '/api/v1/tags/rust/unfollow', user.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/followed_tags', user.token)).body).toHaveLength(1);
  expect((await call('GET', '/api/v1/tags/never-used')).status).toBe(404);
  expect((await call('POST', '/api/v1/tags/bad%20name/follow', user.token)).status).toBe(404);
});

test('a valid hashtag nobody used answers the unsaved tag (Mastodon), which a client can then follow', async () => {
  const user = await createTestUser(core);
  const anonymous = await call('GET', '/api/v1/tags/Unused%C3%A9Tag');
  expect(anonymous.status).toBe(200);
  expect(anonymous.body).toEqual({
    id: '',
    name: 'UnusedéTag',
    url: expect.stringMatching(/\/tags\/Unused%C3%A9Tag$/),
    history: [],
  });
  const mine = await call('GET', '/api/v1/tags/unusedtag2', user.token);
  expect(mine.body).toMatchObject({ id: '', name: 'unusedtag2', following: false, featuring: false });
  // Reading it stored nothing; following it does.
  expect((await call('GET', '/api/v1/followed_tags', user.token)).body).toEqual([]);
  const followed = await call('POST', '/api/v1/tags/unusedtag2/follow', user.token);
  expect(followed.body).toMatchObject({ name: 'unusedtag2', following: true });
  expect(followed.body.id).not.toBe('');
  expect((await call('GET', '/api/v1/tags/unusedtag2', user.token)).body).toMatchObject({
    id: followed.body.id,
    following: true,
  });
  // Still 404: names that cannot be hashtags.
  expect((await call('GET', '/api/v1/tags/12345')).status).toBe(404);
  expect((await call('GET', '/api/v1/tags/two%20words')).status).toBe(404);
});

test('POST /api/v1/tags/:id/feature and /unfeature feature the hashtag on the profile (Mastodon 4.4)', async () => {
  const user = await createTestUser(core);
  const featured = await call('POST', '/api/v1/tags/Gardening/feature', user.token);
  expect(featured.status).toBe(200);
  expect(featured.body).toMatchObject({ name: 'Gardening', featuring: true, following: false });
  expect(featured.body.id).not.toBe('');
  // Idempotent; the tag is one of the caller's featured tags and shows on the public profile.
  expect((await call('POST', '/api/v1/tags/gardening/feature', user.token)).body.id).toBe(featured.body.id);
  const mine = await call('GET', '/api/v1/featured_tags', user.token);
  expect(mine.body.map((t: { name: string }) => t.name)).toEqual(['Gardening']);
  const profile = await call('GET', `/api/v1/accounts/${user.account._id}/featured_tags`);
  expect(profile.body.map((t: { name: string }) => t.name)).toEqual(['Gardening']);
  expect((await call('GET', '/api/v1/tags/gardening', user.token)).body).toMatchObject({ featuring: true });
  await call('POST', '/api/v1/tags/gardening/follow', user.token);
  expect((await call('GET', '/api/v1/followed_tags', user.token)).body).toMatchObject([
    { name: 'Gardening', following: true, featuring: true },
  ]);

  const unfeatured = await call('POST', '/api/v1/tags/gardening/unfeature', user.token);
  expect(unfeatured.status).toBe(200);
  expect(unfeatured.body).toMatchObject({ id: featured.body.id, featuring: false });
  expect((await call('GET', '/api/v1/featured_tags', user.token)).body).toEqual([]);
  expect((await call('POST', '/api/v1/tags/gardening/unfeature', user.token)).status).toBe(200);
  expect((await call('POST', '/api/v1/tags/nobodyusedthis/unfeature', user.token)).body).toMatchObject({ id: '' });

  // Scopes and validation as Mastodon: write:accounts, a user token, a valid name.
  expect((await call('POST', '/api/v1/tags/gardening/feature')).status).toBe(401);
  expect((await call('POST', '/api/v1/tags/bad%20name/feature', user.token)).status).toBe(404);
  for (let i = 0; i < 10; i++) await call('POST', `/api/v1/tags/limit${'x'.repeat(i + 1)}/feature`, user.token);
  const over = await call('POST', '/api/v1/tags/oneTooMany/feature', user.token);
  expect(over.status).toBe(422);
  expect(over.body.error).toMatch(/^Validation failed/);
});
