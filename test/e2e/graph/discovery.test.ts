// Featured tags, follow suggestions, the profile directory and account search over HTTP.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';

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
const idsOf = (body: { id: string }[]) => body.map((a) => a.id);
const id = (u: TestUser) => String(u.account._id);

test('featured tags: at most 10, with usage, suggestions from own posts, public on the profile', async () => {
  const user = await createTestUser(core);
  await call('POST', '/api/v1/statuses', user.token, { status: 'about #cats and #dogs' });
  await call('POST', '/api/v1/statuses', user.token, { status: 'more #cats' });
  const suggestions = await call('GET', '/api/v1/featured_tags/suggestions', user.token);
  expect(suggestions.body.map((t: { name: string }) => t.name)).toEqual(['cats', 'dogs']);
  const cats = await call('POST', '/api/v1/featured_tags', user.token, { name: '#Cats' });
  expect(cats.body).toMatchObject({ name: 'cats', statuses_count: 2 });
  expect(cats.body.last_status_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  for (let i = 0; i < 9; i++)
    expect((await call('POST', '/api/v1/featured_tags', user.token, { name: `tag${i}x` })).status).toBe(200);
  expect((await call('POST', '/api/v1/featured_tags', user.token, { name: 'eleventh' })).status).toBe(422);
  expect((await call('POST', '/api/v1/featured_tags', user.token, { name: 'not valid!' })).status).toBe(422);
  expect((await call('GET', `/api/v1/accounts/${id(user)}/featured_tags`)).body).toHaveLength(10);
  expect((await call('DELETE', `/api/v1/featured_tags/${cats.body.id}`, user.token)).status).toBe(200);
  expect((await call('DELETE', `/api/v1/featured_tags/${cats.body.id}`, user.token)).status).toBe(404);
  expect((await call('GET', '/api/v1/featured_tags', user.token)).body).toHaveLength(9);
  const ofCats = (type: string) =>
    api.published.filter((e) => e.type === type && e.payload.featuredTagId === cats.body.id).map((e) => e.payload);
  const catsEvent = { featuredTagId: cats.body.id, accountId: id(user), name: 'cats' };
  expect(ofCats('FeaturedTagCreated')).toEqual([expect.objectContaining(catsEvent)]);
  expect(ofCats('FeaturedTagDeleted')).toEqual([expect.objectContaining(catsEvent)]);
  expect(api.published.filter((e) => e.type === 'FeaturedTagCreated' && e.payload.accountId === id(user))).toHaveLength(
    10,
  );
});

test('suggestions: friends of friends first, never followed, blocked or dismissed accounts', async () => {
  const me = await createTestUser(core);
  const friend = await createTestUser(core);
  const friendOfFriend = await createTestUser(core);
  const blocked = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${id(friend)}/follow`, me.token);
  await call('POST', `/api/v1/accounts/${id(friendOfFriend)}/follow`, friend.token);
  await call('POST', `/api/v1/accounts/${id(blocked)}/follow`, friend.token);
  await call('POST', `/api/v1/accounts/${id(blocked)}/block`, me.token);
  const v2 = await call('GET', '/api/v2/suggestions', me.token);
  expect(v2.body[0]).toMatchObject({
    account: { id: id(friendOfFriend) },
    sources: expect.arrayContaining(['friends_of_friends']),
  });
  for (const s of v2.body as { sources: string[] }[])
    expect(['friends_of_friends', 'most_followed']).toEqual(expect.arrayContaining(s.sources));
  const v1 = idsOf((await call('GET', '/api/v1/suggestions', me.token)).body);
  expect(v1).not.toContain(id(friend));
  expect(v1).not.toContain(id(blocked));
  expect(v1).not.toContain(id(me));
  expect((await call('DELETE', `/api/v1/suggestions/${id(friendOfFriend)}`, me.token)).status).toBe(200);
  expect(idsOf((await call('GET', '/api/v1/suggestions', me.token)).body)).not.toContain(id(friendOfFriend));
});

test('directory lists discoverable accounts, newest or most recently active first', async () => {
  const shy = await createTestUser(core);
  const active = await createTestUser(core);
  await call('PATCH', '/api/v1/accounts/update_credentials', shy.token, { discoverable: false });
  await call('PATCH', '/api/v1/accounts/update_credentials', active.token, { discoverable: true });
  await call('POST', '/api/v1/statuses', active.token, { status: 'I am here' });
  const byActivity = idsOf((await call('GET', '/api/v1/directory?order=active&local=true')).body);
  expect(byActivity[0]).toBe(id(active));
  expect(byActivity).not.toContain(id(shy));
  const newest = idsOf((await call('GET', '/api/v1/directory?order=new&limit=1')).body);
  expect(newest).toEqual([id(active)]);
});

test('account search: case-insensitive prefix of username or display name, following filter', async () => {
  const me = await createTestUser(core);
  const zed = await createTestUser(core, { username: 'ZedSearchable' });
  const other = await createTestUser(core, { username: 'otherperson' });
  await call('PATCH', '/api/v1/accounts/update_credentials', other.token, { display_name: 'Zeddy Displayname' });
  const hits = idsOf((await call('GET', '/api/v1/accounts/search?q=zed', me.token)).body);
  expect(hits).toEqual(expect.arrayContaining([id(zed), id(other)]));
  expect(hits[0]).not.toBe(id(me));
  expect(idsOf((await call('GET', '/api/v1/accounts/search?q=@ZEDSEARCHABLE', me.token)).body)[0]).toBe(id(zed));
  expect((await call('GET', '/api/v1/accounts/search?q=zed&following=true', me.token)).body).toEqual([]);
  await call('POST', `/api/v1/accounts/${id(zed)}/follow`, me.token);
  expect(idsOf((await call('GET', '/api/v1/accounts/search?q=zed&following=true', me.token)).body)).toEqual([id(zed)]);
  expect((await call('GET', '/api/v1/accounts/search?q=', me.token)).body).toEqual([]);
  // A character above U+FFFF right after the prefix stays inside the index range (real MongoDB orders
  // strings by UTF-8 bytes; test/unit/core/prefixRange.test.ts checks the bound under that order).
  const emoji = await createTestUser(core);
  await call('PATCH', '/api/v1/accounts/update_credentials', emoji.token, { display_name: 'Xylo😀phone' });
  expect(idsOf((await call('GET', '/api/v1/accounts/search?q=xylo', me.token)).body)).toEqual([id(emoji)]);
  expect(
    idsOf((await call('GET', `/api/v1/accounts/search?q=${encodeURIComponent('xylo😀')}`, me.token)).body),
  ).toEqual([id(emoji)]);
  expect((await call('GET', '/api/v1/accounts/search?q=zed')).status).toBe(401);
});
