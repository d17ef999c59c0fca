// Notification policy and requests over HTTP with the notifications pipeline consuming the real
// events: the v2 and v1 policy endpoints, unsolicited private mentions filtered into requests
// (kept out of the lists, counts and conversations), show/accept/dismiss, the bulk forms, merged.
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

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

interface Req {
  id: string;
  notifications_count: string;
  account: { id: string };
  last_status?: { id: string };
}

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

async function dm(from: TestUser, to: TestUser, text: string): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', from.token, {
    status: `@${to.account.username} ${text}`,
    visibility: 'direct',
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const requests = async (u: TestUser) => (await call('GET', '/api/v1/notifications/requests', u.token)).body as Req[];

async function requestFrom(u: TestUser, sender: TestUser, count: string): Promise<Req> {
  return eventually(
    async () =>
      (await requests(u)).find((r) => r.account.id === String(sender.account._id) && r.notifications_count === count),
    30_000,
    `a request from ${sender.account.username} with ${count}`,
  );
}

test('the policy: defaults, v2 and v1 forms, validation', async () => {
  const u = await createTestUser(core);
  const summary = { pending_requests_count: 0, pending_notifications_count: 0 };
  expect((await call('GET', '/api/v2/notifications/policy', u.token)).body).toEqual({
    for_not_following: 'accept',
    for_not_followers: 'accept',
    for_new_accounts: 'accept',
    for_private_mentions: 'filter',
    for_limited_accounts: 'filter',
    summary,
  });
  expect((await call('GET', '/api/v1/notifications/policy', u.token)).body).toEqual({
    filter_not_following: false,
    filter_not_followers: false,
    filter_new_accounts: false,
    filter_private_mentions: true,
    summary,
  });
  const patched = await call('PATCH', '/api/v2/notifications/policy', u.token, {
    for_not_following: 'drop',
    for_new_accounts: 'filter',
  });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({
    for_not_following: 'drop',
    for_new_accounts: 'filter',
    for_private_mentions: 'filter',
  });
  const bad = await call('PATCH', '/api/v2/notifications/policy', u.token, { for_not_followers: 'maybe' });
  expect(bad.status).toBe(422);
  expect(bad.body.error).toEqual(expect.any(String));
  const v1 = await call('PATCH', '/api/v1/notifications/policy', u.token, {
    filter_private_mentions: false,
    filter_not_followers: 'true',
  });
  expect(v1.body).toMatchObject({
    filter_private_mentions: false,
    filter_not_followers: true,
    filter_not_following: true,
  });
  expect((await call('GET', '/api/v2/notifications/policy', u.token)).body).toMatchObject({
    for_private_mentions: 'accept',
    for_not_followers: 'filter',
  });
  expect((await call('GET', '/api/v2/notifications/policy')).status).toBe(401);

  // PUT updates as PATCH does (Mastodon routes both; client libraries send PUT).
  const put = await call('PUT', '/api/v2/notifications/policy', u.token, { for_limited_accounts: 'drop' });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ for_limited_accounts: 'drop', for_not_followers: 'filter', summary });
  expect((await call('GET', '/api/v2/notifications/policy', u.token)).body.for_limited_accounts).toBe('drop');
  expect((await call('PUT', '/api/v2/notifications/policy', u.token, { for_new_accounts: 'x' })).status).toBe(422);
  expect((await call('PUT', '/api/v2/notifications/policy', null, { for_new_accounts: 'drop' })).status).toBe(401);
  const putV1 = await call('PUT', '/api/v1/notifications/policy', u.token, { filter_private_mentions: true });
  expect(putV1.status).toBe(200);
  expect(putV1.body.filter_private_mentions).toBe(true);
});

test('an unsolicited private mention becomes a request; accept lets it and its sender through', async () => {
  const [alice, stranger, friend] = await Promise.all([
    createTestUser(core),
    createTestUser(core),
    createTestUser(core),
  ]);
  await call('POST', `/api/v1/accounts/${friend.account._id}/follow`, alice.token);
  const secret = await dm(stranger, alice, 'buy my stuff');
  await dm(friend, alice, 'hello friend');
  await eventually(
    async () => ((await call('GET', '/api/v1/notifications', alice.token)).body as unknown[]).length === 1,
    30_000,
    'the friend’s mention',
  );
  const req = await requestFrom(alice, stranger, '1');
  expect(req.last_status!.id).toBe(secret);

  // held out of the lists, counts and conversations, but there on request
  const list = (await call('GET', '/api/v1/notifications', alice.token)).body as { account: { id: string } }[];
  expect(list.map((n) => n.account.id)).toEqual([String(friend.account._id)]);
  const grouped = (await call('GET', '/api/v2/notifications', alice.token)).body;
  expect(grouped.notification_groups).toHaveLength(1);
  expect((await call('GET', '/api/v1/notifications/unread_count', alice.token)).body).toEqual({ count: 1 });
  expect(
    ((await call('GET', '/api/v1/notifications?include_filtered=true', alice.token)).body as unknown[]).length,
  ).toBe(2);
  const fromStranger = await call('GET', `/api/v1/notifications?account_id=${stranger.account._id}`, alice.token);
  expect((fromStranger.body as { status: { id: string } }[]).map((n) => n.status.id)).toEqual([secret]);
  const convs = (await call('GET', '/api/v1/conversations', alice.token)).body as { accounts: { id: string }[] }[];
  expect(convs.map((c) => c.accounts[0]!.id)).toEqual([String(friend.account._id)]);
  expect((await call('GET', '/api/v2/notifications/policy', alice.token)).body.summary).toEqual({
    pending_requests_count: 1,
    pending_notifications_count: 1,
  });

  // show; nobody else's
  expect((await call('GET', `/api/v1/notifications/requests/${req.id}`, alice.token)).body).toMatchObject({
    id: req.id,
    notifications_count: '1',
  });
  expect((await call('GET', `/api/v1/notifications/requests/${req.id}`, friend.token)).status).toBe(404);
  expect((await call('POST', `/api/v1/notifications/requests/${req.id}/accept`, friend.token)).status).toBe(404);

  // accept
  expect((await call('POST', `/api/v1/notifications/requests/${req.id}/accept`, alice.token)).body).toEqual({});
  expect((await call('GET', `/api/v1/notifications/requests/${req.id}`, alice.token)).status).toBe(404);
  expect((await call('GET', '/api/v1/notifications/requests/merged', alice.token)).body).toEqual({ merged: true });
  expect(((await call('GET', '/api/v1/notifications', alice.token)).body as unknown[]).length).toBe(2);
  // ...and into the grouped list and its count, however often accepted.
  expect((await call('POST', `/api/v1/notifications/requests/${req.id}/accept`, alice.token)).status).toBe(404);
  const groups = (await call('GET', '/api/v2/notifications', alice.token)).body.notification_groups as {
    sample_account_ids: string[];
  }[];
  expect(groups.flatMap((g) => g.sample_account_ids).sort()).toEqual(
    [stranger, friend].map((u) => String(u.account._id)).sort(),
  );
  expect((await call('GET', '/api/v2/notifications/unread_count', alice.token)).body).toEqual({ count: 2 });
  expect(((await call('GET', '/api/v1/conversations', alice.token)).body as unknown[]).length).toBe(2);
  // the sender is let through from now on
  await dm(stranger, alice, 'thanks');
  await eventually(
    async () => ((await call('GET', '/api/v1/notifications', alice.token)).body as unknown[]).length === 3,
    30_000,
    'the accepted sender’s next mention',
  );
  expect(await requests(alice)).toEqual([]);
});

test('dismiss deletes the request and its notifications; bulk accept and dismiss', async () => {
  const [bob, s1, s2, s3, s4] = await Promise.all(Array.from({ length: 5 }, () => createTestUser(core)));
  await dm(s1, bob, 'one');
  await dm(s1, bob, 'two');
  const r1 = await requestFrom(bob, s1, '2');
  expect((await call('POST', `/api/v1/notifications/requests/${r1.id}/dismiss`, bob.token)).body).toEqual({});
  expect(await requests(bob)).toEqual([]);
  expect((await call('GET', `/api/v1/notifications?account_id=${s1.account._id}`, bob.token)).body).toEqual([]);

  // One sender at a time: requests are ordered by creation, and the notifications pipeline may take
  // mentions from different partitions in any order.
  const created: Req[] = [];
  for (const s of [s2, s3, s4]) {
    await dm(s, bob, 'hi');
    created.push(await requestFrom(bob, s, '1'));
  }
  const [r2, r3, r4] = created;
  expect((await requests(bob)).map((r) => r.id)).toEqual([r4!.id, r3!.id, r2!.id]);
  const page = await call('GET', '/api/v1/notifications/requests?limit=1', bob.token);
  expect(page.body.map((r: Req) => r.id)).toEqual([r4!.id]);
  expect(
    (await call('POST', '/api/v1/notifications/requests/accept', bob.token, { id: [r2!.id, r3!.id, '999'] })).body,
  ).toEqual({});
  expect((await requests(bob)).map((r) => r.id)).toEqual([r4!.id]);
  expect((await call('POST', '/api/v1/notifications/requests/dismiss', bob.token, { id: [r4!.id] })).status).toBe(200);
  expect(await requests(bob)).toEqual([]);
  const shown = (await call('GET', '/api/v1/notifications', bob.token)).body as { account: { id: string } }[];
  expect(shown.map((n) => n.account.id).sort()).toEqual([s2, s3].map((s) => String(s.account._id)).sort());
});
