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
