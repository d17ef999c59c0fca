// The social graph through a real client library (masto): follow request → authorize →
// relationship → unfollow, block, mute with a duration, notes, domain blocks, lists and followed
// hashtags.
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { runNodeForJson } from '../../support/processes.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});

afterAll(async () => {
  await api?.close();
});

it('a client follows a locked account, is authorized, unfollows, and is blocked and muted', async () => {
  const owner = await createTestUser(api.core, { locked: true });
  const fan = await createTestUser(api.core);
  const ownerId = String(owner.account._id);
  const fanId = String(fan.account._id);
  const seen = await runNodeForJson('test/e2e/graph/mastoGraphFlow.ts', [
    api.server.url,
    owner.token,
    ownerId,
    fan.token,
    fanId,
  ]);
  expect(seen.requested).toEqual({ following: false, requested: true, showingReblogs: false });
  expect(seen.requests).toEqual([fanId]);
  expect(seen.authorized).toEqual({ followedBy: true, requestedBy: false });
  expect(seen.afterAuthorize).toEqual({ following: true, showingReblogs: false });
  expect(seen.followers).toEqual([fanId]);
  expect(seen.unfollowed).toBe(false);
  expect(seen.blocked).toBe(true);
  expect(seen.blocks).toEqual([fanId]);
  expect(seen.unblocked).toBe(false);
  expect(seen.muted).toEqual({ muting: true, mutingNotifications: false });
  expect(seen.muteExpires).toHaveLength(1);
  expect(Date.parse(seen.muteExpires[0]) - Date.now()).toBeGreaterThan(500_000);
  expect(seen.unmuted).toBe(false);
  expect(seen.note).toBe('a fan');
  expect(seen.domainBlocks).toEqual(['spam.example']);
  expect(seen.list).toMatchObject({ title: 'Fans', repliesPolicy: 'followed', members: [fanId] });
  expect(seen.list.of).toHaveLength(1);
  expect(seen.renamed).toBe('Best fans');
  expect(seen.emptied).toBe(0);
  expect(seen.listsAfter).toBe(0);
  expect(seen.tag).toEqual({ followed: true, list: ['Fediverse'], unfollowed: false });
});
