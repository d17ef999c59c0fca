// Suspension enforced everywhere: a user with followers, statuses, reblogs, favourites, mentions and
// a reply is suspended through the admin API; every surface is checked before (so the checks can
// fail) and after, then the suspension is lifted and everything comes back. A reblog of the
// suspended author's status by someone else must not leak it (CVE-2026-23961's class).
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

jest.setTimeout(180_000);

let api: TestApi;
let core: Core;
let pipelines: Pipeline[] = [];
let villain: TestUser, alice: TestUser, bob: TestUser, carol: TestUser, admin: TestUser;
let villainPost: string, villainReply: string, aliceReblogOfVillain: string, alicePost: string, villainReblog: string;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const ids = (list: { id: string }[]) => list.map((x) => x.id);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipelines = [await runNotificationsPipeline(core, consumerTuning), await runFanOutPipeline(core, consumerTuning)];
  [villain, alice, bob, carol] = await Promise.all([
    createTestUser(core),
    createTestUser(core),
    createTestUser(core),
    createTestUser(core),
  ]);
  admin = await createTestUser(core, { role: 'Admin', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  const v = String(villain.account._id);
  // The graph: alice and bob follow the villain, the villain follows alice, carol follows alice only.
  await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, carol.token);
  await call('POST', `/api/v1/accounts/${v}/follow`, alice.token);
  await call('POST', `/api/v1/accounts/${v}/follow`, bob.token);
  await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, villain.token);
  alicePost = (await call('POST', '/api/v1/statuses', alice.token, { status: 'hello world #fediverse' })).body.id;
  villainPost = (await call('POST', '/api/v1/statuses', villain.token, { status: 'villainy #fediverse' })).body.id;
  villainReply = (
    await call('POST', '/api/v1/statuses', villain.token, {
      status: `@${alice.account.username} nice`,
      in_reply_to_id: alicePost,
    })
  ).body.id;
  villainReblog = (await call('POST', `/api/v1/statuses/${alicePost}/reblog`, villain.token)).body.id;
  await call('POST', `/api/v1/statuses/${alicePost}/favourite`, villain.token);
  aliceReblogOfVillain = (await call('POST', `/api/v1/statuses/${villainPost}/reblog`, alice.token)).body.id;
  // Wait for the consumers: alice's notifications from the villain (follow, mention, reblog,
  // favourite), the villain's post and reblog in bob's home feed, alice's reblog of it in carol's.
  await eventually(
    async () =>
      (await collection(core.db, notifications).countDocuments({
        accountId: alice.account._id,
        fromAccountId: villain.account._id,
      })) >= 4,
    30_000,
    "alice's notifications from the villain",
  );
  await eventually(
    async () => ids((await call('GET', '/api/v1/timelines/home', bob.token)).body).includes(villainPost),
    30_000,
    "the villain's post in bob's home feed",
  );
  await eventually(
    async () => ids((await call('GET', '/api/v1/timelines/home', bob.token)).body).includes(villainReblog),
    30_000,
    "the villain's reblog in bob's home feed",
  );
  await eventually(
    async () => ids((await call('GET', '/api/v1/timelines/home', carol.token)).body).includes(aliceReblogOfVillain),
    30_000,
    "alice's reblog of the villain in carol's home feed",
  );
});

afterAll(async () => {
  for (const p of pipelines) await p.stop();
  await api?.close();
});

/** Every surface where the villain shows up; `true` where they are visible. */
async function surfaces(): Promise<Record<string, boolean>> {
  const v = String(villain.account._id);
  const a = String(alice.account._id);
  const has = async (path: string, token: string | null, id: string) =>
    ids(((await call('GET', path, token)).body as { id: string }[]) ?? []).includes(id);
  const notifs = (await call('GET', '/api/v1/notifications', alice.token)).body as { account: { id: string } }[];
  const grouped = (await call('GET', '/api/v2/notifications', alice.token)).body as {
    accounts: { id: string }[];
  };
  const context = (await call('GET', `/api/v1/statuses/${alicePost}/context`, alice.token)).body as {
    descendants: { id: string }[];
  };
  type S = { id: string; reblog: { id: string } | null };
  const homeBob = (await call('GET', '/api/v1/timelines/home', bob.token)).body as S[];
  const homeCarol = (await call('GET', '/api/v1/timelines/home', carol.token)).body as S[];
  const publicTimeline = (await call('GET', '/api/v1/timelines/public', null)).body as {
    id: string;
    reblog: { id: string } | null;
  }[];
  return {
    'status by id': (await call('GET', `/api/v1/statuses/${villainPost}`, bob.token)).status === 200,
    'status anonymously': (await call('GET', `/api/v1/statuses/${villainPost}`, null)).status === 200,
    "alice's reblog of it": (await call('GET', `/api/v1/statuses/${aliceReblogOfVillain}`, bob.token)).status === 200,
    'account statuses': await has(`/api/v1/accounts/${v}/statuses`, bob.token, villainPost),
    "bob's home feed: the villain's post": homeBob.some((s) => s.id === villainPost),
    "bob's home feed: the villain's reblog": homeBob.some((s) => s.id === villainReblog),
    "alice's home feed": await has('/api/v1/timelines/home', alice.token, villainPost),
    "carol's home feed: alice's reblog of the villain": homeCarol.some(
      (s) => s.id === aliceReblogOfVillain || s.reblog?.id === villainPost,
    ),
    'public timeline': publicTimeline.some((s) => s.id === villainPost || s.reblog?.id === villainPost),
    'hashtag timeline': await has('/api/v1/timelines/tag/fediverse', null, villainPost),
    'thread context': context.descendants.some((s) => s.id === villainReply),
    'favourited by': await has(`/api/v1/statuses/${alicePost}/favourited_by`, alice.token, v),
    'reblogged by': await has(`/api/v1/statuses/${alicePost}/reblogged_by`, alice.token, v),
    "alice's followers": await has(`/api/v1/accounts/${a}/followers`, alice.token, v),
    "alice's following": await has(`/api/v1/accounts/${a}/following`, alice.token, v),
    relationships: await has(`/api/v1/accounts/relationships?id[]=${v}`, alice.token, v),
    'account search': await has(`/api/v1/accounts/search?q=${villain.account.username}`, alice.token, v),
    notifications: notifs.some((n) => n.account.id === v),
    'grouped notifications': grouped.accounts.some((x) => x.id === v),
    'own token works': (await call('GET', '/api/v1/accounts/verify_credentials', villain.token)).status === 200,
  };
}

test('suspension hides the account everywhere; unsuspension restores it', async () => {
  const before = await surfaces();
  const hiddenBefore = Object.entries(before)
    .filter(([, visible]) => !visible)
    .map(([k]) => k);
  expect(hiddenBefore).toEqual([]);

  const v = String(villain.account._id);
  const res = await call('POST', `/api/v1/admin/accounts/${v}/action`, admin.token, { type: 'suspend', text: 'bye' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({});
  expect(api.published.some((e) => e.type === 'AccountSuspended' && e.payload.accountId === v)).toBe(true);

  const during = await surfaces();
  const leaking = Object.entries(during)
    .filter(([, visible]) => visible)
    .map(([k]) => k);
  expect(leaking).toEqual([]);

  // The profile itself answers, marked suspended and emptied; relationships with with_suspended.
  const profile = await call('GET', `/api/v1/accounts/${v}`, alice.token);
  expect(profile.body).toMatchObject({ id: v, suspended: true, display_name: '', note: '' });
  const withSuspended = await call('GET', `/api/v1/accounts/relationships?id[]=${v}&with_suspended=true`, alice.token);
  expect(ids(withSuspended.body)).toEqual([v]);
  expect((await call('GET', '/api/v1/accounts/verify_credentials', villain.token)).status).toBe(403);
  const listed = await call('GET', '/api/v2/admin/accounts?status=suspended', admin.token);
  expect(ids(listed.body)).toEqual([v]);
  expect(listed.body[0]).toMatchObject({ suspended: true, account: { suspended: true } });

  const lifted = await call('POST', `/api/v1/admin/accounts/${v}/unsuspend`, admin.token);
  expect(lifted.status).toBe(200);
  expect(lifted.body.suspended).toBe(false);
  expect(api.published.some((e) => e.type === 'AccountUnsuspended' && e.payload.accountId === v)).toBe(true);
  const after = await surfaces();
  expect(
    Object.entries(after)
      .filter(([, visible]) => !visible)
      .map(([k]) => k),
  ).toEqual([]);
  // Not suspended any more: unsuspend again is refused.
  expect((await call('POST', `/api/v1/admin/accounts/${v}/unsuspend`, admin.token)).status).toBe(403);
});
