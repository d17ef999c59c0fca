// Followers/following visibility for every kind of viewer (rules 4 and 5), with and without
// hide_collections: owner, follower, stranger, blocked (the owner blocks the viewer), blocker (the
// viewer blocks the owner), muted (the owner mutes the viewer) and logged-out.
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

type Viewer = 'owner' | 'follower' | 'stranger' | 'blocked' | 'blocker' | 'muted' | 'logged-out';
const VIEWERS: Viewer[] = ['owner', 'follower', 'stranger', 'blocked', 'blocker', 'muted', 'logged-out'];

/** What each viewer sees of the owner's lists: all (the owner's followers and followings) or none. */
const EXPECTED: Record<'shown' | 'hidden', Record<Viewer, 'all' | 'none'>> = {
  shown: {
    owner: 'all',
    follower: 'all',
    stranger: 'all',
    blocked: 'none',
    blocker: 'all',
    muted: 'all',
    'logged-out': 'all',
  },
  hidden: {
    owner: 'all',
    follower: 'none',
    stranger: 'none',
    blocked: 'none',
    blocker: 'none',
    muted: 'none',
    'logged-out': 'none',
  },
};

test.each(['shown', 'hidden'] as const)('collections %s: each viewer sees what Mastodon shows', async (mode) => {
  const call = api.call;
  const owner = await createTestUser(core);
  const follower = await createTestUser(core);
  const followed = await createTestUser(core);
  const viewers: Record<Viewer, TestUser | null> = {
    owner,
    follower,
    stranger: await createTestUser(core),
    blocked: await createTestUser(core),
    blocker: await createTestUser(core),
    muted: await createTestUser(core),
    'logged-out': null,
  };
  await call('POST', `/api/v1/accounts/${owner.account._id}/follow`, follower.token);
  await call('POST', `/api/v1/accounts/${followed.account._id}/follow`, owner.token);
  await call('POST', `/api/v1/accounts/${viewers.blocked!.account._id}/block`, owner.token);
  await call('POST', `/api/v1/accounts/${owner.account._id}/block`, viewers.blocker!.token);
  await call('POST', `/api/v1/accounts/${viewers.muted!.account._id}/mute`, owner.token);
  if (mode === 'hidden')
    await call('PATCH', '/api/v1/accounts/update_credentials', owner.token, { hide_collections: true });

  for (const viewer of VIEWERS) {
    const token = viewers[viewer]?.token ?? null;
    const followers = await call('GET', `/api/v1/accounts/${owner.account._id}/followers`, token);
    const following = await call('GET', `/api/v1/accounts/${owner.account._id}/following`, token);
    expect([viewer, followers.status, following.status]).toEqual([viewer, 200, 200]);
    const seen = [followers.body.map((a: { id: string }) => a.id), following.body.map((a: { id: string }) => a.id)];
    const all = [[String(follower.account._id)], [String(followed.account._id)]];
    expect([viewer, seen]).toEqual([viewer, EXPECTED[mode][viewer] === 'all' ? all : [[], []]]);
  }
});

test('a viewer does not see, in anyone’s lists, accounts it blocks, mutes or is blocked by', async () => {
  const call = api.call;
  const owner = await createTestUser(core);
  const viewer = await createTestUser(core);
  const [plain, blockedByViewer, mutedByViewer, blockingViewer] = await Promise.all(
    Array.from({ length: 4 }, () => createTestUser(core)),
  );
  for (const fan of [plain!, blockedByViewer!, mutedByViewer!, blockingViewer!])
    await call('POST', `/api/v1/accounts/${owner.account._id}/follow`, fan.token);
  await call('POST', `/api/v1/accounts/${blockedByViewer!.account._id}/block`, viewer.token);
  await call('POST', `/api/v1/accounts/${mutedByViewer!.account._id}/mute`, viewer.token);
  await call('POST', `/api/v1/accounts/${viewer.account._id}/block`, blockingViewer!.token);
  const seen = await call('GET', `/api/v1/accounts/${owner.account._id}/followers`, viewer.token);
  expect(seen.body.map((a: { id: string }) => a.id)).toEqual([String(plain!.account._id)]);
  expect((await call('GET', `/api/v1/accounts/${owner.account._id}/followers`)).body).toHaveLength(4);
});
