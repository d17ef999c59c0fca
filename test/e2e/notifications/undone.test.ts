// A notification belongs to its activity, as in Mastodon: undoing the activity (unfollow,
// unfavourite, unreblog, deleting a status that mentioned the user) removes the notification from
// the v1 list, the unread counts and the grouped v2 notifications; following again after an
// unfollow is a new follow and a new `follow` notification. Over HTTP, with the notifications
// pipeline consuming the real events.
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notificationGroups } from '../../../services/core/model/notifications.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { createKafkaEventSink } from '../../../services/core/events/kafkaSink.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

type N = { id: string; type: string; account: { id: string }; status?: { id: string } };
type G = { group_key: string; type: string; notifications_count: number; sample_account_ids: string[] };

const list = async (u: TestUser) => (await call('GET', '/api/v1/notifications', u.token)).body as N[];
const groups = async (u: TestUser) =>
  (await call('GET', '/api/v2/notifications', u.token)).body.notification_groups as G[];
const unread = async (u: TestUser, version = 'v1') =>
  (await call('GET', `/api/${version}/notifications/unread_count`, u.token)).body.count as number;
const types = async (u: TestUser) => (await list(u)).map((n) => `${n.type}:${n.account.id}`);

/** Waits until the user's v1 notifications are `expected` (type:sender, newest first). */
async function expectNotifications(u: TestUser, expected: string[], what: string): Promise<void> {
  await eventually(async () => JSON.stringify(await types(u)) === JSON.stringify(expected), 30_000, what);
}

test('unfollow removes the follow notification; following again is a new notification', async () => {
  const [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const from = String(bob.account._id);
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token)).status).toBe(200);
  await expectNotifications(alice, [`follow:${from}`], 'first follow notification');
  const [first] = await list(alice);
  expect(await unread(alice)).toBe(1);
  expect((await groups(alice)).map((g) => [g.type, g.notifications_count])).toEqual([['follow', 1]]);

  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/unfollow`, bob.token)).status).toBe(200);
  await expectNotifications(alice, [], 'follow notification removed');
  expect(await unread(alice)).toBe(0);
  expect(await unread(alice, 'v2')).toBe(0);
  expect(await groups(alice)).toEqual([]);
  expect(await collection(core.db, notificationGroups).countDocuments({ accountId: alice.account._id })).toBe(0);

  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token)).status).toBe(200);
  await expectNotifications(alice, [`follow:${from}`], 'second follow notification');
  const [second] = await list(alice);
  expect(BigInt(second.id)).toBeGreaterThan(BigInt(first.id));
  expect(await unread(alice)).toBe(1);
  expect((await groups(alice)).map((g) => [g.type, g.notifications_count])).toEqual([['follow', 1]]);
});

test('unfavourite and unreblog remove their notifications and update the groups', async () => {
  const [alice, bob, carol] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
  const [b, c] = [bob, carol].map((u) => String(u.account._id));
  const status = (await call('POST', '/api/v1/statuses', alice.token, { status: 'like me' })).body.id as string;
  for (const u of [bob, carol]) {
    expect((await call('POST', `/api/v1/statuses/${status}/favourite`, u.token)).status).toBe(200);
    expect((await call('POST', `/api/v1/statuses/${status}/reblog`, u.token)).status).toBe(200);
  }
  await eventually(async () => (await list(alice)).length === 4, 30_000, 'four notifications');
  expect(await unread(alice)).toBe(4);
  const fav = (await groups(alice)).find((g) => g.type === 'favourite')!;
  expect(fav.notifications_count).toBe(2);

  expect((await call('POST', `/api/v1/statuses/${status}/unfavourite`, bob.token)).status).toBe(200);
  expect((await call('POST', `/api/v1/statuses/${status}/unreblog`, carol.token)).status).toBe(200);
  await eventually(async () => (await list(alice)).length === 2, 30_000, 'two notifications removed');
  expect((await types(alice)).sort()).toEqual([`favourite:${c}`, `reblog:${b}`].sort());
  expect(await unread(alice)).toBe(2);
  expect(await unread(alice, 'v2')).toBe(2);
  const after = await groups(alice);
  expect(after.map((g) => [g.type, g.notifications_count, g.sample_account_ids]).sort()).toEqual(
    [
      ['favourite', 1, [c]],
      ['reblog', 1, [b]],
    ].sort(),
  );
  // The remaining group is read by its key and lists only the remaining sender.
  const accounts = await call('GET', `/api/v2/notifications/${fav.group_key}/accounts`, alice.token);
  expect((accounts.body as { id: string }[]).map((a) => a.id)).toEqual([c]);
});

test('deleting a status that mentioned the user removes the mention notification', async () => {
  const [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const b = String(bob.account._id);
  const keep = await call('POST', '/api/v1/statuses', bob.token, { status: `@${alice.account.username} one` });
  const gone = await call('POST', '/api/v1/statuses', bob.token, { status: `@${alice.account.username} two` });
  await expectNotifications(alice, [`mention:${b}`, `mention:${b}`], 'two mentions');
  expect(await unread(alice)).toBe(2);

  expect((await call('DELETE', `/api/v1/statuses/${gone.body.id}`, bob.token)).status).toBe(200);
  await expectNotifications(alice, [`mention:${b}`], 'mention removed');
  expect((await list(alice))[0].status?.id).toBe(keep.body.id);
  expect(await unread(alice)).toBe(1);
  expect(await unread(alice, 'v2')).toBe(1);
  expect((await groups(alice)).map((g) => g.type)).toEqual(['mention']);
});

test('the late end of an old follow leaves the notification of the new follow alone', async () => {
  const [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const from = String(bob.account._id);
  await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token);
  await expectNotifications(alice, [`follow:${from}`], 'first follow notification');
  // Alice removes bob from her followers (an event keyed by alice, not by bob) ...
  expect((await call('POST', `/api/v1/accounts/${bob.account._id}/remove_from_followers`, alice.token)).status).toBe(
    200,
  );
  await expectNotifications(alice, [], 'removed with the follow');
  await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token);
  await expectNotifications(alice, [`follow:${from}`], 'second follow notification');
  // ... and that end arrives again after the new follow (another partition, a redelivery).
  const ended = api.published.find(
    (e) =>
      e.type === 'FollowDeleted' &&
      e.payload.accountId === from &&
      e.payload.targetAccountId === String(alice.account._id),
  );
  expect(ended).toBeDefined();
  const sink = await createKafkaEventSink(core.config, core.logger);
  try {
    await sink.publish([ended!]);
  } finally {
    await sink.close();
  }
  await eventually(async () => (await pipeline.lag()) === 0, 30_000, 'pipeline caught up');
  expect(await types(alice)).toEqual([`follow:${from}`]);
  expect(await unread(alice)).toBe(1);
});

test('authorizing or rejecting a follow request removes its follow_request notification', async () => {
  const alice = await createTestUser(core, { locked: true });
  const [bob, carol] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const [b, c] = [bob, carol].map((u) => String(u.account._id));
  for (const u of [bob, carol])
    expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, u.token)).body.requested).toBe(true);
  await eventually(async () => (await list(alice)).length === 2, 30_000, 'two follow_request notifications');
  expect((await types(alice)).sort()).toEqual([`follow_request:${b}`, `follow_request:${c}`].sort());
  expect(await unread(alice)).toBe(2);

  // Mastodon's FollowRequest#authorize! destroys the request and its notification; the follow it
  // makes brings no `follow` notification.
  expect((await call('POST', `/api/v1/follow_requests/${b}/authorize`, alice.token)).body.followed_by).toBe(true);
  await expectNotifications(alice, [`follow_request:${c}`], 'authorized request notification removed');
  expect(await unread(alice)).toBe(1);
  expect((await groups(alice)).map((g) => [g.type, g.sample_account_ids])).toEqual([['follow_request', [c]]]);

  expect((await call('POST', `/api/v1/follow_requests/${c}/reject`, alice.token)).status).toBe(200);
  await expectNotifications(alice, [], 'rejected request notification removed');
  expect(await unread(alice)).toBe(0);
  expect(await unread(alice, 'v2')).toBe(0);
  expect(await groups(alice)).toEqual([]);

  // A new request after a rejection is a new notification.
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, carol.token)).body.requested).toBe(true);
  await expectNotifications(alice, [`follow_request:${c}`], 'new request notified');
  await eventually(async () => (await pipeline.lag()) === 0, 30_000, 'pipeline caught up');
  expect(await types(alice)).toEqual([`follow_request:${c}`]);
});
