// Notifications over HTTP with the notifications pipeline consuming the real events: the v1 list
// (types, exclude_types, account_id, pagination and Link), show/dismiss/clear, the grouped v2 API
// (groups of favourites/reblogs/follows, deduplicated accounts and statuses, group show, accounts,
// dismiss), markers and the unread counts that respect the notifications marker.
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { requester } from '../../support/http.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser;
let hello: string, mention: string;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  [alice, bob, carol, dave] = await Promise.all(Array.from({ length: 4 }, () => createTestUser(core)));
  // One action at a time, so the notifications' order is the actions' order (the events travel
  // on different topics and partitions).
  let expected = 0;
  const step = async (action: () => Promise<unknown>) => {
    await action();
    expected++;
    await eventually(
      async () =>
        (await collection(core.db, notifications).countDocuments({ accountId: alice.account._id })) === expected,
      30_000,
      `notification ${expected}`,
    );
  };
  await step(() => call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token));
  hello = (await call('POST', '/api/v1/statuses', alice.token, { status: 'hello' })).body.id;
  for (const u of [bob, carol, dave]) await step(() => call('POST', `/api/v1/statuses/${hello}/favourite`, u.token));
  for (const u of [bob, carol]) await step(() => call('POST', `/api/v1/statuses/${hello}/reblog`, u.token));
  await step(async () => {
    mention = (await call('POST', '/api/v1/statuses', bob.token, { status: `@${alice.account.username} hi` })).body.id;
  });
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

type N = { id: string; type: string; group_key: string; account: { id: string }; status?: { id: string } };

test('GET /api/v1/notifications: filters, pagination, Link header, show, auth', async () => {
  const all = await call('GET', '/api/v1/notifications', alice.token);
  expect(all.status).toBe(200);
  const list = all.body as N[];
  expect(list.map((n) => n.type)).toEqual([
    'mention',
    'reblog',
    'reblog',
    'favourite',
    'favourite',
    'favourite',
    'follow',
  ]);
  expect(list[0]!.status!.id).toBe(mention);
  expect(list[0]!.group_key).toBe(`ungrouped-${list[0]!.id}`);
  expect(list[3]!.group_key).toBe(list[4]!.group_key);
  expect(list[6]!.status).toBeUndefined();

  const q = async (qs: string) =>
    ((await call('GET', `/api/v1/notifications?${qs}`, alice.token)).body as N[]).map((n) => n.type);
  expect(await q('types[]=mention&types[]=bogus')).toEqual(['mention']);
  expect(await q('exclude_types[]=favourite&exclude_types[]=reblog')).toEqual(['mention', 'follow']);
  expect(await q(`account_id=${carol.account._id}`)).toEqual(['reblog', 'favourite']);

  const res = await requester(api.server.url)('GET', '/api/v1/notifications?limit=2', alice.token);
  const page = (await res.json()) as N[];
  expect(page.map((n) => n.id)).toEqual(list.slice(0, 2).map((n) => n.id));
  const link = res.headers.get('link') ?? '';
  expect(link).toContain(`max_id=${list[1]!.id}>; rel="next"`);
  expect(link).toContain(`min_id=${list[0]!.id}>; rel="prev"`);
  const older = (await call('GET', `/api/v1/notifications?max_id=${list[1]!.id}&limit=2`, alice.token)).body as N[];
  expect(older.map((n) => n.id)).toEqual(list.slice(2, 4).map((n) => n.id));
  const newer = (await call('GET', `/api/v1/notifications?min_id=${list[3]!.id}&limit=2`, alice.token)).body as N[];
  expect(newer.map((n) => n.id)).toEqual(list.slice(1, 3).map((n) => n.id));

  const one = await call('GET', `/api/v1/notifications/${list[0]!.id}`, alice.token);
  expect(one.status).toBe(200);
  expect(one.body.id).toBe(list[0]!.id);
  expect((await call('GET', `/api/v1/notifications/${list[0]!.id}`, bob.token)).status).toBe(404);
  expect((await call('GET', '/api/v1/notifications/nope', alice.token)).status).toBe(404);
  expect((await call('GET', '/api/v1/notifications')).status).toBe(401);
});

test('GET /api/v2/notifications groups favourites, reblogs and follows of one status', async () => {
  const res = await call('GET', '/api/v2/notifications', alice.token);
  expect(res.status).toBe(200);
  const groups = res.body.notification_groups as {
    group_key: string;
    type: string;
    notifications_count: number;
    sample_account_ids: string[];
    status_id?: string;
    most_recent_notification_id: string;
  }[];
  expect(groups.map((g) => [g.type, g.notifications_count])).toEqual([
    ['mention', 1],
    ['reblog', 2],
    ['favourite', 3],
    ['follow', 1],
  ]);
  const fav = groups[2]!;
  expect(fav.sample_account_ids).toEqual([dave, carol, bob].map((u) => String(u.account._id)));
  expect(fav.status_id).toBe(hello);
  expect((res.body.accounts as { id: string }[]).map((a) => a.id).sort()).toEqual(
    [bob, carol, dave].map((u) => String(u.account._id)).sort(),
  );
  expect((res.body.statuses as { id: string }[]).map((s) => s.id).sort()).toEqual([hello, mention].sort());

  // favourites not grouped on request
  const ungrouped = await call('GET', '/api/v2/notifications?grouped_types[]=reblog', alice.token);
  expect((ungrouped.body.notification_groups as { type: string }[]).map((g) => g.type)).toEqual([
    'mention',
    'reblog',
    'favourite',
    'favourite',
    'favourite',
    'follow',
  ]);
  // pagination by groups
  const first = await call('GET', '/api/v2/notifications?limit=2', alice.token);
  expect((first.body.notification_groups as { type: string }[]).map((g) => g.type)).toEqual(['mention', 'reblog']);
  const partial = await call('GET', '/api/v2/notifications?expand_accounts=partial_avatars', alice.token);
  expect(partial.body.partial_accounts).toBeDefined();

  const one = await call('GET', `/api/v2/notifications/${fav.group_key}`, alice.token);
  expect(one.status).toBe(200);
  expect(one.body.notification_groups[0].notifications_count).toBe(3);
  const accounts = await call('GET', `/api/v2/notifications/${fav.group_key}/accounts`, alice.token);
  expect((accounts.body as { id: string }[]).map((a) => a.id)).toEqual(fav.sample_account_ids);
  expect((await call('GET', `/api/v2/notifications/${fav.group_key}`, bob.token)).status).toBe(404);
  expect((await call('GET', '/api/v2/notifications/ungrouped-abc', alice.token)).status).toBe(404);
});

test('markers, unread counts, dismiss and clear', async () => {
  expect((await call('GET', '/api/v1/markers?timeline[]=notifications', alice.token)).body).toEqual({});
  expect((await call('GET', '/api/v1/notifications/unread_count', alice.token)).body).toEqual({ count: 7 });
  expect((await call('GET', '/api/v2/notifications/unread_count', alice.token)).body).toEqual({ count: 4 });
  expect((await call('GET', '/api/v1/notifications/unread_count?limit=3', alice.token)).body).toEqual({ count: 3 });

  const list = (await call('GET', '/api/v1/notifications', alice.token)).body as N[];
  const saved = await call('POST', '/api/v1/markers', alice.token, { notifications: { last_read_id: list[2]!.id } });
  expect(saved.status).toBe(200);
  expect(saved.body.notifications).toMatchObject({ last_read_id: list[2]!.id, version: 0 });
  const again = await call('POST', '/api/v1/markers', alice.token, {
    notifications: { last_read_id: list[1]!.id },
    home: { last_read_id: hello },
  });
  expect(again.body.notifications.version).toBe(1);
  expect(again.body.home).toMatchObject({ last_read_id: hello, version: 0 });
  const got = await call('GET', '/api/v1/markers?timeline[]=notifications&timeline[]=home', alice.token);
  expect(Object.keys(got.body).sort()).toEqual(['home', 'notifications']);
  expect(typeof got.body.home.updated_at).toBe('string');
  expect((await call('GET', '/api/v1/notifications/unread_count', alice.token)).body).toEqual({ count: 1 });
  expect((await call('GET', '/api/v2/notifications/unread_count', alice.token)).body).toEqual({ count: 1 });

  expect((await call('POST', `/api/v1/notifications/${list[0]!.id}/dismiss`, alice.token)).status).toBe(200);
  expect((await call('GET', `/api/v1/notifications/${list[0]!.id}`, alice.token)).status).toBe(404);
  expect((await call('POST', `/api/v1/notifications/${list[0]!.id}/dismiss`, alice.token)).status).toBe(404);

  const favKey = list.find((n) => n.type === 'favourite')!.group_key;
  expect((await call('POST', `/api/v2/notifications/${favKey}/dismiss`, alice.token)).status).toBe(200);
  const left = ((await call('GET', '/api/v1/notifications', alice.token)).body as N[]).map((n) => n.type);
  expect(left).toEqual(['reblog', 'reblog', 'follow']);

  expect((await call('POST', '/api/v1/notifications/clear', alice.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/notifications', alice.token)).body).toEqual([]);
  expect((await call('GET', '/api/v1/notifications', bob.token)).status).toBe(200);
});

test('GET /api/v1/preferences gives the posting defaults', async () => {
  const res = await call('GET', '/api/v1/preferences', alice.token);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    'posting:default:visibility': 'public',
    'posting:default:sensitive': false,
    'reading:expand:media': 'default',
    'reading:expand:spoilers': false,
  });
  expect((await call('GET', '/api/v1/preferences')).status).toBe(401);
});
