// The social graph over HTTP: follows and follow requests, blocks, mutes with expiry, domain
// blocks, relationships, notes, endorsements, account statuses, the events the graph publishes,
// and counters under concurrent follows/unfollows.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { mutes } from '../../../services/core/model/mutes.ts';
import { endExpiredMutes } from '../../../services/core/graph/mute.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';

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

async function relationship(viewer: TestUser, target: TestUser) {
  const res = await call('GET', `/api/v1/accounts/relationships?id[]=${target.account._id}`, viewer.token);
  expect(res.status).toBe(200);
  return res.body[0];
}

async function counts(user: TestUser) {
  const a = await collection(core.db, accounts).findOne({ _id: user.account._id });
  return { followers: a?.followersCount, following: a?.followingCount };
}

function published(type: string) {
  return api.published.filter((e) => e.type === type);
}

test('follow an unlocked account, update the options, unfollow', async () => {
  const alice = await createTestUser(core);
  const bob = await createTestUser(core);
  const followed = await call('POST', `/api/v1/accounts/${bob.account._id}/follow`, alice.token, { reblogs: false });
  expect(followed.status).toBe(200);
  expect(followed.body).toMatchObject({
    id: String(bob.account._id),
    following: true,
    showing_reblogs: false,
    notifying: false,
    requested: false,
    followed_by: false,
  });
  expect(followed.body).not.toHaveProperty('blocked_by');
  // Again, with new options: updated, no error (rule 1).
  const again = await call('POST', `/api/v1/accounts/${bob.account._id}/follow`, alice.token, {
    reblogs: true,
    notify: true,
    languages: ['en', 'de'],
  });
  expect(again.body).toMatchObject({
    following: true,
    showing_reblogs: true,
    notifying: true,
    languages: ['en', 'de'],
  });
  expect(await counts(alice)).toMatchObject({ following: 1 });
  expect(await counts(bob)).toMatchObject({ followers: 1 });
  expect((await relationship(bob, alice)).followed_by).toBe(true);
  await eventually(
    async () => published('FollowCreated').some((e) => e.payload.targetAccountId === String(bob.account._id)),
    10_000,
    'FollowCreated',
  );

  const gone = await call('POST', `/api/v1/accounts/${bob.account._id}/unfollow`, alice.token);
  expect(gone.body).toMatchObject({ following: false, requested: false });
  expect(await counts(alice)).toMatchObject({ following: 0 });
  expect(await counts(bob)).toMatchObject({ followers: 0 });
  expect(published('FollowDeleted').some((e) => e.payload.reason === 'UNFOLLOW')).toBe(true);
});

test('following yourself is 403, a missing or malformed account 404', async () => {
  const alice = await createTestUser(core);
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, alice.token)).status).toBe(403);
  expect((await call('POST', '/api/v1/accounts/999999999/follow', alice.token)).status).toBe(404);
  const bad = await call('POST', '/api/v1/accounts/abc/follow', alice.token);
  expect(bad.status).toBe(404);
  expect(bad.body).toEqual({ error: 'Record not found' });
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`)).status).toBe(401);
});

test('a locked account gets a request; reblogs sent with it apply once authorized', async () => {
  const carol = await createTestUser(core, { locked: true });
  const dave = await createTestUser(core);
  const asked = await call('POST', `/api/v1/accounts/${carol.account._id}/follow`, dave.token, { reblogs: false });
  expect(asked.status).toBe(200);
  expect(asked.body).toMatchObject({ following: false, requested: true, showing_reblogs: false });
  expect((await relationship(carol, dave)).requested_by).toBe(true);

  const me = await call('GET', '/api/v1/accounts/verify_credentials', carol.token);
  expect(me.body.source.follow_requests_count).toBe(1);
  const requests = await call('GET', '/api/v1/follow_requests', carol.token);
  expect(requests.body.map((a: { id: string }) => a.id)).toEqual([String(dave.account._id)]);

  const ok = await call('POST', `/api/v1/follow_requests/${dave.account._id}/authorize`, carol.token);
  expect(ok.body).toMatchObject({ followed_by: true, requested_by: false });
  expect(await relationship(dave, carol)).toMatchObject({ following: true, requested: false, showing_reblogs: false });
  expect((await call('GET', '/api/v1/follow_requests', carol.token)).body).toEqual([]);
  expect(published('FollowAccepted').some((e) => e.payload.accountId === String(dave.account._id))).toBe(true);
  expect((await call('POST', `/api/v1/follow_requests/${dave.account._id}/authorize`, carol.token)).status).toBe(404);

  // Reject, and unlock accepting what is pending.
  const erin = await createTestUser(core);
  const frank = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${carol.account._id}/follow`, erin.token);
  await call('POST', `/api/v1/accounts/${carol.account._id}/follow`, frank.token);
  const no = await call('POST', `/api/v1/follow_requests/${erin.account._id}/reject`, carol.token);
  expect(no.body).toMatchObject({ followed_by: false, requested_by: false });
  const unlocked = await call('PATCH', '/api/v1/accounts/update_credentials', carol.token, { locked: false });
  expect(unlocked.status).toBe(200);
  expect((await relationship(frank, carol)).following).toBe(true);
  expect(await counts(carol)).toMatchObject({ followers: 2 });
});

test('remove_from_followers, block and unblock', async () => {
  const gina = await createTestUser(core);
  const hank = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${gina.account._id}/follow`, hank.token);
  const removed = await call('POST', `/api/v1/accounts/${hank.account._id}/remove_from_followers`, gina.token);
  expect(removed.body.followed_by).toBe(false);
  expect(await counts(gina)).toMatchObject({ followers: 0 });

  await call('POST', `/api/v1/accounts/${gina.account._id}/follow`, hank.token);
  await call('POST', `/api/v1/accounts/${hank.account._id}/follow`, gina.token);
  const blocked = await call('POST', `/api/v1/accounts/${hank.account._id}/block`, gina.token);
  expect(blocked.body).toMatchObject({ blocking: true, following: false, followed_by: false });
  expect(await counts(gina)).toMatchObject({ followers: 0, following: 0 });
  expect(await counts(hank)).toMatchObject({ followers: 0, following: 0 });
  // The blocked account cannot follow back.
  expect((await call('POST', `/api/v1/accounts/${gina.account._id}/follow`, hank.token)).status).toBe(403);
  const list = await call('GET', '/api/v1/blocks', gina.token);
  expect(list.body.map((a: { id: string }) => a.id)).toEqual([String(hank.account._id)]);
  expect(published('BlockCreated').some((e) => e.payload.targetAccountId === String(hank.account._id))).toBe(true);
  const unblocked = await call('POST', `/api/v1/accounts/${hank.account._id}/unblock`, gina.token);
  expect(unblocked.body.blocking).toBe(false);
  expect((await call('GET', '/api/v1/blocks', gina.token)).body).toEqual([]);
});

test('mute with notifications and a duration; the mute ends when it expires', async () => {
  const ivy = await createTestUser(core);
  const jack = await createTestUser(core);
  const muted = await call('POST', `/api/v1/accounts/${jack.account._id}/mute`, ivy.token, {
    notifications: false,
    duration: 3600,
  });
  expect(muted.body).toMatchObject({ muting: true, muting_notifications: false });
  const list = await call('GET', '/api/v1/mutes', ivy.token);
  expect(list.body).toHaveLength(1);
  expect(Date.parse(list.body[0].mute_expires_at) - Date.now()).toBeGreaterThan(3500_000);

  // Make it due, then the scheduler's job ends it.
  await collection(core.db, mutes).updateOne(
    { accountId: ivy.account._id },
    { $set: { expiresAt: new Date(Date.now() - 1000) } },
  );
  expect((await relationship(ivy, jack)).muting).toBe(false);
  expect(await endExpiredMutes(core)).toBeGreaterThanOrEqual(1);
  expect((await call('GET', '/api/v1/mutes', ivy.token)).body).toEqual([]);
  expect(published('MuteDeleted').some((e) => e.payload.expired === true)).toBe(true);

  const forever = await call('POST', `/api/v1/accounts/${jack.account._id}/mute`, ivy.token);
  expect(forever.body).toMatchObject({ muting: true, muting_notifications: true });
  expect((await call('GET', '/api/v1/mutes', ivy.token)).body[0].mute_expires_at).toBeNull();
  expect((await call('POST', `/api/v1/accounts/${jack.account._id}/unmute`, ivy.token)).body.muting).toBe(false);
  expect(
    (await call('POST', `/api/v1/accounts/${jack.account._id}/mute`, ivy.token, { duration: 'soon' })).status,
  ).toBe(422);
});

test('domain blocks are normalised, listed and removed', async () => {
  const kim = await createTestUser(core);
  expect((await call('POST', '/api/v1/domain_blocks', kim.token, { domain: 'Bad.EXAMPLE.' })).status).toBe(200);
  expect((await call('POST', '/api/v1/domain_blocks', kim.token, { domain: 'bücher.example' })).status).toBe(200);
  expect((await call('POST', '/api/v1/domain_blocks', kim.token, { domain: 'bad.example' })).status).toBe(200);
  const list = await call('GET', '/api/v1/domain_blocks', kim.token);
  expect(list.body.sort()).toEqual(['bad.example', 'xn--bcher-kva.example']);
  expect((await call('POST', '/api/v1/domain_blocks', kim.token, { domain: 'not a domain' })).status).toBe(422);
  expect((await call('POST', '/api/v1/domain_blocks', kim.token, {})).status).toBe(400);
  expect((await call('DELETE', '/api/v1/domain_blocks?domain=bad.example', kim.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/domain_blocks', kim.token)).body).toEqual(['xn--bcher-kva.example']);
});

test('notes and endorsements show in the relationship', async () => {
  const lee = await createTestUser(core);
  const max = await createTestUser(core);
  const noted = await call('POST', `/api/v1/accounts/${max.account._id}/note`, lee.token, {
    comment: 'met at the meetup',
  });
  expect(noted.body.note).toBe('met at the meetup');
  // Endorsing needs a follow (422 before), then is idempotent.
  expect((await call('POST', `/api/v1/accounts/${max.account._id}/pin`, lee.token)).status).toBe(422);
  await call('POST', `/api/v1/accounts/${max.account._id}/follow`, lee.token);
  expect((await call('POST', `/api/v1/accounts/${max.account._id}/pin`, lee.token)).body.endorsed).toBe(true);
  expect((await call('POST', `/api/v1/accounts/${max.account._id}/pin`, lee.token)).body.endorsed).toBe(true);
  expect((await call('GET', '/api/v1/endorsements', lee.token)).body.map((a: { id: string }) => a.id)).toEqual([
    String(max.account._id),
  ]);
  expect((await call('GET', `/api/v1/accounts/${lee.account._id}/endorsements`)).body).toHaveLength(1);
  expect((await call('POST', `/api/v1/accounts/${max.account._id}/unpin`, lee.token)).body.endorsed).toBe(false);
  const many = await call(
    'GET',
    `/api/v1/accounts/relationships?id[]=${max.account._id}&id[]=abc&id[]=123456789&id[]=${lee.account._id}`,
    lee.token,
  );
  expect(many.body.map((r: { id: string }) => r.id)).toEqual([String(max.account._id), String(lee.account._id)]);
});

test('followers and following: pagination by the follow record, and who may see them', async () => {
  const owner = await createTestUser(core);
  const fans: TestUser[] = [];
  for (let i = 0; i < 5; i++) {
    const fan = await createTestUser(core);
    await call('POST', `/api/v1/accounts/${owner.account._id}/follow`, fan.token);
    fans.push(fan);
  }
  const page1 = await call('GET', `/api/v1/accounts/${owner.account._id}/followers?limit=2`);
  expect(page1.body.map((a: { id: string }) => a.id)).toEqual([
    String(fans[4]!.account._id),
    String(fans[3]!.account._id),
  ]);
  const next = /<([^>]+)>; rel="next"/.exec(page1.headers.get('link') ?? '')?.[1];
  expect(next).toBeDefined();
  const page2 = await call('GET', new URL(next!).pathname + new URL(next!).search);
  expect(page2.body.map((a: { id: string }) => a.id)).toEqual([
    String(fans[2]!.account._id),
    String(fans[1]!.account._id),
  ]);
  const following = await call('GET', `/api/v1/accounts/${fans[0]!.account._id}/following`);
  expect(following.body.map((a: { id: string }) => a.id)).toEqual([String(owner.account._id)]);

  const stranger = await createTestUser(core);
  const ids = async (viewer: TestUser | null) =>
    (await call('GET', `/api/v1/accounts/${owner.account._id}/followers`, viewer?.token ?? null)).body.map(
      (a: { id: string }) => a.id,
    );
  // The viewer's own blocks and mutes hide those accounts (rule 4).
  await call('POST', `/api/v1/accounts/${fans[0]!.account._id}/block`, stranger.token);
  await call('POST', `/api/v1/accounts/${fans[1]!.account._id}/mute`, stranger.token);
  await call('POST', `/api/v1/accounts/${stranger.account._id}/block`, fans[2]!.token);
  expect(await ids(stranger)).toEqual([fans[4], fans[3]].map((f) => String(f!.account._id)));
  expect(await ids(null)).toHaveLength(5);
  // The owner blocking the viewer hides the lists entirely (rule 5).
  await call('POST', `/api/v1/accounts/${stranger.account._id}/block`, owner.token);
  expect(await ids(stranger)).toEqual([]);
  // hide_collections: hidden from everyone but the owner.
  await call('PATCH', '/api/v1/accounts/update_credentials', owner.token, { hide_collections: true });
  expect(await ids(null)).toEqual([]);
  expect(await ids(fans[4]!)).toEqual([]);
  expect(await ids(owner)).toHaveLength(5);
});

test('account statuses: followers-only posts for followers, filters, blocked callers see nothing', async () => {
  const poster = await createTestUser(core);
  const follower = await createTestUser(core);
  const stranger = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${poster.account._id}/follow`, follower.token);
  const post = async (body: Record<string, unknown>) =>
    (await call('POST', '/api/v1/statuses', poster.token, body)).body.id;
  const publicId = await post({ status: 'hello #Tagged world' });
  const privateId = await post({ status: 'followers only', visibility: 'private' });
  const replyId = await post({ status: 'to someone', in_reply_to_id: publicId });
  const reblog = await call('POST', `/api/v1/statuses/${publicId}/reblog`, poster.token);
  expect(reblog.status).toBe(200);

  const ids = async (viewer: TestUser | null, query = '') =>
    (await call('GET', `/api/v1/accounts/${poster.account._id}/statuses${query}`, viewer?.token ?? null)).body.map(
      (s: { id: string }) => s.id,
    );
  expect(await ids(null)).toEqual([reblog.body.id, replyId, publicId]);
  expect(await ids(follower)).toEqual([reblog.body.id, replyId, privateId, publicId]);
  expect(await ids(stranger, '?exclude_reblogs=true')).toEqual([replyId, publicId]);
  expect(await ids(null, '?tagged=tagged')).toEqual([publicId]);
  expect(await ids(null, '?limit=1')).toEqual([reblog.body.id]);
  // A self-reply is kept by exclude_replies, as in Mastodon.
  expect(await ids(null, '?exclude_replies=true&exclude_reblogs=true')).toEqual([replyId, publicId]);
  // Pinned: newest pin first, followers-only ones for followers only, paged by the pin.
  for (const id of [publicId, privateId, replyId])
    expect((await call('POST', `/api/v1/statuses/${id}/pin`, poster.token)).status).toBe(200);
  expect(await ids(follower, '?pinned=true')).toEqual([replyId, privateId, publicId]);
  expect(await ids(null, '?pinned=true')).toEqual([replyId, publicId]);
  expect(await ids(follower, '?pinned=true&limit=1')).toEqual([replyId]);
  await call('POST', `/api/v1/accounts/${stranger.account._id}/block`, poster.token);
  expect(await ids(stranger)).toEqual([]);
  expect((await call('GET', '/api/v1/accounts/abc/statuses')).status).toBe(404);
});

test('50 parallel follow/unfollow pairs leave true counters and relationships', async () => {
  const star = await createTestUser(core);
  const fans = await Promise.all(Array.from({ length: 50 }, () => createTestUser(core)));
  await Promise.all(
    fans.map(async (fan, i) => {
      await call('POST', `/api/v1/accounts/${star.account._id}/follow`, fan.token);
      if (i % 2 === 0) await call('POST', `/api/v1/accounts/${star.account._id}/unfollow`, fan.token);
      // Racing duplicates of the same follow must not count twice.
      if (i % 5 === 0)
        await Promise.all([
          call('POST', `/api/v1/accounts/${star.account._id}/follow`, fan.token),
          call('POST', `/api/v1/accounts/${star.account._id}/follow`, fan.token),
        ]);
    }),
  );
  const expected = fans.filter((_, i) => i % 2 === 1 || i % 5 === 0).length;
  expect(await counts(star)).toMatchObject({ followers: expected });
  const rel = await Promise.all(fans.map((fan) => relationship(fan, star)));
  expect(rel.filter((r) => r.following).length).toBe(expected);
  for (const [i, fan] of fans.entries()) {
    expect(await counts(fan)).toMatchObject({ following: i % 2 === 1 || i % 5 === 0 ? 1 : 0 });
  }
});

test('familiar followers: the accounts the caller follows that follow each target', async () => {
  const [me, friend, other, stranger, target, lonely] = await Promise.all(
    Array.from({ length: 6 }, () => createTestUser(core)),
  );
  for (const u of [friend, other]) await call('POST', `/api/v1/accounts/${u.account._id}/follow`, me.token);
  // `other` is followed but does not follow the target; `stranger` follows it but is not followed.
  for (const u of [friend, stranger]) await call('POST', `/api/v1/accounts/${target.account._id}/follow`, u.token);
  const ids = [target, lonely].map((u) => `id[]=${u.account._id}`).join('&');
  const res = await call('GET', `/api/v1/accounts/familiar_followers?${ids}`, me.token);
  expect(res.status).toBe(200);
  expect(res.body).toEqual([
    { id: String(target.account._id), accounts: [expect.objectContaining({ id: String(friend.account._id) })] },
    { id: String(lonely.account._id), accounts: [] },
  ]);
  const tooMany = Array.from({ length: 41 }, (_, i) => `id[]=${i + 1}`).join('&');
  expect((await call('GET', `/api/v1/accounts/familiar_followers?${tooMany}`, me.token)).status).toBe(422);
});
