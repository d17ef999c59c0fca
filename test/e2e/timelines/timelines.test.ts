// Home, list, public and hashtag timelines over HTTP, with the fan-out pipeline consuming the real
// events from Kafka: who gets a status in their home feed (follower, non-follower, blocked, muted,
// reblogs off, replies, direct, followers-only, exclusive list, followed hashtag), removal on
// delete, unfollow and block, and regeneration of a missing feed.
import type { Core } from '../../../services/core/context.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import { fanOutStatus } from '../../../services/core/feeds/fanOut.ts';
import { fanOutStatusOf } from '../../../services/core/feeds/authorSide.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { addToFeed, feedKey } from '../../../services/core/feeds/feeds.ts';
import { batch } from '../../../services/core/db/redis.ts';
import { createRemoteAccount, createRemoteStatus } from '../../support/remoteAccounts.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { attachCard, upsertCard } from '../../../services/core/previews/cards.ts';
import { trendKeys } from '../../../services/core/trends/counters.ts';
import { reviewTrend } from '../../../services/core/trends/review.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { activeKey, forgetActivityRefreshes, markActive } from '../../../services/core/feeds/activity.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runFanOutPipeline(core, consumerTuning);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const ids = (body: { id: string }[]) => body.map((s) => s.id);

async function home(user: TestUser, query = ''): Promise<string[]> {
  const res = await call('GET', `/api/v1/timelines/home${query}`, user.token);
  expect(res.status).toBe(200);
  return ids(res.body);
}

async function post(user: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  return res.body.id;
}

/** Waits until the fan-out has handled `marker` (a status the author's home feed gets). */
/**
 * Waits until `reader`'s home feed has the status. The author's own feed is written beside the
 * followers' (fanOut.ts), so it tells only about itself; the followers of a small account are
 * written in one script, so an active follower's feed tells that they all are done.
 */
async function fannedOut(reader: TestUser, marker: string): Promise<void> {
  await eventually(
    async () => (await core.redis.zscore(feedKey('home', reader.account._id), marker)) !== null,
    20_000,
    `fan-out of ${marker} to ${reader.account.username}`,
  );
}

test('the home feed gets what Mastodon would insert, and nothing else', async () => {
  const author = await createTestUser(core);
  const [follower, stranger, blocker, muter, noReblogs, replyWatcher, mentioned] = await Promise.all(
    Array.from({ length: 7 }, () => createTestUser(core)),
  );
  const friend = await createTestUser(core);
  for (const u of [follower!, blocker!, muter!, replyWatcher!])
    await call('POST', `/api/v1/accounts/${author.account._id}/follow`, u.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, noReblogs!.token, { reblogs: false });
  await call('POST', `/api/v1/accounts/${friend.account._id}/follow`, replyWatcher!.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/block`, blocker!.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/mute`, muter!.token);

  const hello = await post(author, { status: 'hello followers' });
  const privateOne = await post(author, { status: 'followers only', visibility: 'private' });
  const friendPost = await post(friend, { status: 'a friend speaks' });
  const replyToFriend = await post(author, {
    status: '@' + friend.account.username + ' yes',
    in_reply_to_id: friendPost,
  });
  const direct = await post(author, { status: `@${mentioned!.account.username} psst`, visibility: 'direct' });
  const reblog = (await call('POST', `/api/v1/statuses/${friendPost}/reblog`, author.token)).body.id;
  const marker = await post(author, { status: 'last one' });
  await fannedOut(author, marker);
  await fannedOut(follower!, marker);

  expect(await home(follower!)).toEqual([marker, reblog, privateOne, hello]);
  expect(await home(noReblogs!)).toEqual([marker, privateOne, hello]);
  // Follows the replied-to account too: gets the reply; the reblog of a status already in its feed is skipped.
  expect(await home(replyWatcher!)).toEqual([marker, replyToFriend, friendPost, privateOne, hello]);
  expect(await home(stranger!)).toEqual([]);
  expect(await home(blocker!)).toEqual([]);
  expect(await home(muter!)).toEqual([]);
  expect(await home(mentioned!)).toEqual([direct]);
  expect((await home(author)).slice(0, 3)).toEqual([marker, reblog, direct]);

  // Pagination and Link headers.
  const first = await call('GET', '/api/v1/timelines/home?limit=2', follower!.token);
  expect(ids(first.body)).toEqual([marker, reblog]);
  expect(first.headers.get('link')).toContain('rel="next"');
  expect(await home(follower!, `?max_id=${reblog}`)).toEqual([privateOne, hello]);
  expect(await home(follower!, `?min_id=${hello}&limit=1`)).toEqual([privateOne]);

  // Delete and unfollow take statuses out.
  await call('DELETE', `/api/v1/statuses/${hello}`, author.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/unfollow`, noReblogs!.token);
  await eventually(async () => !(await home(follower!)).includes(hello), 20_000, 'deleted status gone');
  await eventually(async () => (await home(noReblogs!)).length === 0, 20_000, 'unfollowed author gone');
  // The feed itself, not only what the timeline shows: a deleted direct message leaves the
  // mentioned account's feed too.
  await call('DELETE', `/api/v1/statuses/${direct}`, author.token);
  await eventually(
    async () => (await core.redis.zscore(feedKey('home', mentioned!.account._id), direct)) === null,
    20_000,
    'deleted direct message gone from the feed of the account it mentions',
  );
  expect(await core.redis.zscore(feedKey('home', follower!.account._id), hello)).toBeNull();
});

test('a new follow merges the followed account’s recent statuses; a missing feed is rebuilt on read', async () => {
  const author = await createTestUser(core);
  const reader = await createTestUser(core);
  const older = await post(author, { status: 'before the follow' });
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, reader.token);
  await eventually(async () => (await home(reader)).includes(older), 20_000, 'merge on follow');
  await core.redis.del(feedKey('home', reader.account._id));
  expect(await home(reader)).toEqual([older]);
});

test('a user away longer than the active window gets no fan-out; coming back rebuilds the feed', async () => {
  const author = await createTestUser(core);
  const away = await createTestUser(core);
  const witness = await createTestUser(core);
  expect(await core.redis.get(activeKey(away.account._id))).toBe('ok');
  const ttl = await core.redis.ttl(activeKey(away.account._id));
  expect(ttl).toBeGreaterThan(core.config.userActiveDays * 86400 - 60);
  expect(ttl).toBeLessThanOrEqual(core.config.userActiveDays * 86400);
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, away.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, witness.token);
  const before = await post(author, { status: 'while you were here' });
  await fannedOut(witness, before);
  expect(await core.redis.zscore(feedKey('home', away.account._id), before)).not.toBeNull();

  // The window passes: the marker expires, and the fan-out leaves the feed alone.
  await core.redis.del(activeKey(away.account._id));
  const during = await post(author, { status: 'while you were away' });
  await fannedOut(witness, during);
  expect(await core.redis.zscore(feedKey('home', away.account._id), during)).toBeNull();

  // Back: the first read rebuilds the feed from MongoDB, and the fan-out feeds it again.
  expect(await home(away)).toEqual([during, before]);
  expect(await core.redis.get(activeKey(away.account._id))).toBe('ok');
  const after = await post(author, { status: 'welcome back' });
  await fannedOut(witness, after);
  expect(await core.redis.zscore(feedKey('home', away.account._id), after)).not.toBeNull();
});

test('a returning user’s API use marks the feed for a rebuild, which merges what arrives meanwhile', async () => {
  const author = await createTestUser(core);
  const back = await createTestUser(core);
  const witness = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, back.token);
  await call('POST', `/api/v1/accounts/${author.account._id}/follow`, witness.token);
  await core.redis.del(activeKey(back.account._id));
  const missed = await post(author, { status: 'missed' });
  // Done for the followers before the marker comes back (else the fan-out may write it after).
  await fannedOut(witness, missed);
  forgetActivityRefreshes();
  // Any API use records the activity: the marker comes back as "stale", so the fan-out writes again.
  expect((await call('GET', '/api/v1/accounts/verify_credentials', back.token)).status).toBe(200);
  expect(await core.redis.get(activeKey(back.account._id))).toBe('stale');
  const fresh = await post(author, { status: 'fresh' });
  await fannedOut(witness, fresh);
  expect(await core.redis.zscore(feedKey('home', back.account._id), fresh)).not.toBeNull();
  expect(await core.redis.zscore(feedKey('home', back.account._id), missed)).toBeNull();
  // The read sees the stale marker and merges the rebuild into what the fan-out wrote.
  expect(await home(back)).toEqual([fresh, missed]);
  expect(await core.redis.get(activeKey(back.account._id))).toBe('ok');
});

test('remote followers have no home feed written', async () => {
  const author = await createTestUser(core);
  const remote = { ...author.account, _id: 880_000_000n + BigInt(Math.floor(Math.random() * 1e6)) };
  await collection(core.db, accounts).insertOne({
    ...remote,
    username: `r${remote._id}`,
    usernameLower: `r${remote._id}`,
    domain: 'remote.example',
    uri: `https://remote.example/users/r${remote._id}`,
    url: `https://remote.example/@r${remote._id}`,
  });
  await collection(core.db, follows).insertOne({
    _id: remote._id,
    accountId: remote._id,
    targetAccountId: author.account._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: null,
    createdAt: new Date(),
  });
  const id = await post(author, { status: 'to the fediverse' });
  await fannedOut(author, id);
  expect(await core.redis.exists(feedKey('home', remote._id))).toBe(0);
});

test('exclusive lists keep members out of the home feed; followed hashtags bring statuses in', async () => {
  const owner = await createTestUser(core);
  const member = await createTestUser(core);
  const tagger = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${member.account._id}/follow`, owner.token);
  const list = (await call('POST', '/api/v1/lists', owner.token, { title: 'Work', exclusive: true })).body;
  await call('POST', `/api/v1/lists/${list.id}/accounts`, owner.token, { account_ids: [String(member.account._id)] });
  await call('POST', '/api/v1/tags/gardening/follow', owner.token);
  const memberPost = await post(member, { status: 'work stuff' });
  const tagged = await post(tagger, { status: 'my #Gardening today' });
  await fannedOut(member, memberPost);
  await fannedOut(tagger, tagged);
  await eventually(
    async () => ids((await call('GET', `/api/v1/timelines/list/${list.id}`, owner.token)).body).includes(memberPost),
    20_000,
    'list feed',
  );
  expect(await home(owner)).toEqual([tagged]);
  expect((await call('GET', `/api/v1/timelines/list/${list.id}`, member.token)).status).toBe(404);
  // Deleted, they leave the feeds they reached through the hashtag and the list.
  await call('DELETE', `/api/v1/statuses/${tagged}`, tagger.token);
  await call('DELETE', `/api/v1/statuses/${memberPost}`, member.token);
  await eventually(
    async () =>
      (await core.redis.zscore(feedKey('home', owner.account._id), tagged)) === null &&
      (await core.redis.zscore(feedKey('list', list.id), memberPost)) === null,
    20_000,
    'deleted statuses gone from the hashtag follower’s feed and the list feed',
  );
});

test('a domain block takes that domain’s statuses out of the home and list feeds and keeps reblogs of them out', async () => {
  const viewer = await createTestUser(core);
  const friend = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${friend.account._id}/follow`, viewer.token);
  const far = await createRemoteAccount(core, 'https://blocked.example', `far${Date.now()}`);
  const farPost = await createRemoteStatus(core, far, 'from far away');
  const list = (await call('POST', '/api/v1/lists', viewer.token, { title: 'Far' })).body;
  // As the fan-out had put them there while the viewer followed the remote account.
  await addToFeed(core.redis, feedKey('home', viewer.account._id), farPost._id);
  await addToFeed(core.redis, feedKey('list', list.id), farPost._id);
  const near = await post(friend, { status: 'near' });
  await fannedOut(friend, near);

  expect((await call('POST', '/api/v1/domain_blocks', viewer.token, { domain: 'blocked.example' })).status).toBe(200);
  await eventually(
    async () =>
      (await core.redis.zscore(feedKey('home', viewer.account._id), String(farPost._id))) === null &&
      (await core.redis.zscore(feedKey('list', list.id), String(farPost._id))) === null,
    20_000,
    'the blocked domain’s status gone from the home and list feeds',
  );
  expect(await core.redis.zscore(feedKey('home', viewer.account._id), near)).not.toBeNull();
  // A followed account's reblog of that domain's status is not inserted.
  const reblog = (await call('POST', `/api/v1/statuses/${farPost._id}/reblog`, friend.token)).body.id;
  const marker = await post(friend, { status: 'after the reblog' });
  await eventually(
    async () => (await core.redis.zscore(feedKey('home', viewer.account._id), marker)) !== null,
    20_000,
    'the friend’s later post',
  );
  expect(await core.redis.zscore(feedKey('home', viewer.account._id), reblog)).toBeNull();
  expect(await core.redis.zscore(feedKey('home', friend.account._id), reblog)).not.toBeNull();
});

test('public and hashtag timelines, logged out, with local/only_media and any/all/none', async () => {
  const user = await createTestUser(core);
  const a = await post(user, { status: 'public #alpha #beta' });
  const b = await post(user, { status: 'public #alpha' });
  await post(user, { status: 'unlisted #alpha', visibility: 'unlisted' });
  await post(user, { status: 'private #alpha', visibility: 'private' });
  const publicIds = ids((await call('GET', '/api/v1/timelines/public?local=true&limit=40')).body);
  expect(publicIds).toEqual(expect.arrayContaining([a, b]));
  expect(publicIds.indexOf(b)).toBeLessThan(publicIds.indexOf(a));
  expect(ids((await call('GET', '/api/v1/timelines/public?remote=true')).body)).not.toContain(a);
  expect(ids((await call('GET', '/api/v1/timelines/public?only_media=true')).body)).not.toContain(a);
  expect(ids((await call('GET', '/api/v1/timelines/tag/Alpha')).body).slice(0, 2)).toEqual([b, a]);
  expect(ids((await call('GET', '/api/v1/timelines/tag/alpha?all[]=beta')).body)).toEqual([a]);
  expect(ids((await call('GET', '/api/v1/timelines/tag/alpha?none[]=beta')).body)).not.toContain(a);
  expect((await call('GET', '/api/v1/timelines/home')).status).toBe(401);
});

test('silenced authors leave the public and hashtag timelines of those who do not follow them', async () => {
  const silenced = await createTestUser(core);
  const follower = await createTestUser(core);
  const stranger = await createTestUser(core);
  await call('POST', `/api/v1/accounts/${silenced.account._id}/follow`, follower.token);
  const id = await post(silenced, { status: 'quietly #hushed' });
  await collection(core.db, accounts).updateOne({ _id: silenced.account._id }, { $set: { silencedAt: new Date() } });
  for (const path of ['/api/v1/timelines/public?local=true', '/api/v1/timelines/tag/hushed']) {
    expect(ids((await call('GET', path)).body)).not.toContain(id);
    expect(ids((await call('GET', path, stranger.token)).body)).not.toContain(id);
    expect(ids((await call('GET', path, follower.token)).body)).toContain(id);
    expect(ids((await call('GET', path, silenced.token)).body)).toContain(id);
  }
});

test('link timeline: statuses of discoverable authors sharing a trending link; 404 for a link that is not trending', async () => {
  const author = await createTestUser(core);
  const hidden = await createTestUser(core);
  await collection(core.db, accounts).updateOne({ _id: author.account._id }, { $set: { discoverable: true } });
  await collection(core.db, accounts).updateOne({ _id: hidden.account._id }, { $set: { discoverable: false } });
  const url = 'https://news.example/story';
  const card = await upsertCard(core, {
    url,
    title: 'A story',
    description: '',
    type: 'link',
    authorName: '',
    authorUrl: '',
    providerName: 'News',
    providerUrl: '',
    html: '',
    width: 0,
    height: 0,
    image: null,
    embedUrl: '',
    language: 'en',
    publishedAt: null,
  });
  const shared = await post(author, { status: `read ${url}` });
  const notDiscoverable = await post(hidden, { status: `also ${url}` });
  const unlisted = await post(author, { status: `quietly ${url}`, visibility: 'unlisted' });
  for (const id of [shared, notDiscoverable, unlisted]) await attachCard(core, BigInt(id), card._id);
  const path = `/api/v1/timelines/link?url=${encodeURIComponent(url)}`;
  expect((await call('GET', path)).status).toBe(404);
  await core.redis.zadd(trendKeys.ranking('link'), 5, String(card._id));
  await reviewTrend(core, 'link', String(card._id), 'approved', null);
  const res = await call('GET', path);
  expect(res.status).toBe(200);
  expect(ids(res.body)).toEqual([shared]);
  expect(res.body[0].card?.url).toBe(url);
  expect((await call('GET', '/api/v1/timelines/link?url=https%3A%2F%2Fother.example%2F')).status).toBe(404);
  expect((await call('GET', '/api/v1/timelines/link')).status).toBe(404);
});

/**
 * `followIds.length` local, active followers of `star`, each following with that follow id, and
 * the star's follower counter set as following would have set it.
 */
async function fans(star: TestUser, base: bigint, followIds: bigint[]) {
  const followers = followIds.map((_, i) => {
    const username = `fan${base + BigInt(i)}`;
    return {
      ...star.account,
      _id: base + BigInt(i),
      username,
      usernameLower: username,
      uri: `${star.account.uri}-fan-${i}`,
      url: `${star.account.url}-fan-${i}`,
    };
  });
  await collection(core.db, accounts).insertMany(followers);
  await collection(core.db, follows).insertMany(
    followers.map((f, i) => ({
      _id: followIds[i]!,
      accountId: f._id,
      targetAccountId: star.account._id,
      showReblogs: true,
      notify: false,
      languages: null,
      uri: null,
      createdAt: new Date(),
    })),
  );
  await collection(core.db, accounts).updateOne(
    { _id: star.account._id },
    { $set: { followersCount: followers.length } },
  );
  await markActive(
    core,
    followers.map((f) => f._id),
    'ok',
  );
  return followers;
}

/** Posts, then waits until every follower's home feed holds the status exactly once. */
async function postToAll(star: TestUser, followers: { _id: bigint }[], text: string): Promise<string> {
  const id = await post(star, { status: text });
  await eventually(
    async () => {
      const pipe = batch(core.redis);
      for (const f of followers) pipe.zscore(feedKey('home', f._id), id);
      return ((await pipe.exec()) ?? []).every(([, score]) => score !== null);
    },
    60_000,
    'every follower feed holds the status',
  );
  const pipe = batch(core.redis);
  for (const f of followers) pipe.zcard(feedKey('home', f._id));
  for (const [, count] of (await pipe.exec()) ?? []) expect(count).toBe(1);
  return id;
}

/** The followers each FanOutBatchRequested job of the status carried (none: a range to read). */
const fanOutJobs = (statusId: string): string[][] =>
  api.published
    .filter((e) => e.type === 'FanOutBatchRequested' && e.payload.statusId === statusId)
    .map((e) => (e.payload as { followerIds: string[] }).followerIds);

test('a big account’s fan-out goes out as slice jobs and reaches every follower once', async () => {
  const star = await createTestUser(core);
  const base = 900_000_000n;
  const followers = await fans(
    star,
    base,
    Array.from({ length: 2500 }, (_, i) => base + BigInt(i)),
  );
  const id = await postToAll(star, followers, 'to all my fans');
  // 2,500 followers: read at once, cut into three slices that carry their followers.
  const jobs = fanOutJobs(id);
  expect(jobs.map((j) => j.length).sort((a, b) => a - b)).toEqual([500, 1000, 1000]);
});

test('a remote author with many followers elsewhere and few here is fanned out inline', async () => {
  const reader = await createTestUser(core);
  const far = await createRemoteAccount(core, 'https://popular.example', `star${Date.now()}`);
  // Its counter is its followers everywhere; here it has one.
  await collection(core.db, accounts).updateOne({ _id: far._id }, { $set: { followersCount: 1_000_000 } });
  await collection(core.db, follows).insertOne({
    _id: far._id,
    accountId: reader.account._id,
    targetAccountId: far._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: null,
    createdAt: new Date(),
  });
  const status = await createRemoteStatus(core, far, 'hello from afar');
  await fanOutStatus(core, fanOutStatusOf(status));
  expect(await core.redis.zscore(feedKey('home', reader.account._id), String(status._id))).not.toBeNull();
  expect(fanOutJobs(String(status._id))).toEqual([]);
});

test('a very big account’s followers go out as ranges; a crowded range is cut again', async () => {
  const star = await createTestUser(core);
  const base = 70_000_000_000n;
  // 10,000 follows with consecutive ids (a burst of followers) and 600 spread over a wide span:
  // the ranges cut by the counter put the burst into one range, which must cut itself again.
  const followIds = [
    ...Array.from({ length: 600 }, (_, i) => base + BigInt(i) * 1_000_000n),
    ...Array.from({ length: 10_000 }, (_, i) => base + 700_000_000n + BigInt(i)),
  ];
  const followers = await fans(star, base, followIds);
  const id = await postToAll(star, followers, 'to a crowd');
  const jobs = fanOutJobs(id);
  const ranges = jobs.filter((j) => j.length === 0);
  const cut = jobs.filter((j) => j.length > 0);
  expect(ranges.length).toBeGreaterThanOrEqual(Math.ceil(followers.length / 800));
  // The crowded range: its first 10,000 follow records as slices that carry their followers.
  expect(cut.map((j) => j.length)).toEqual(Array(10).fill(1000));
});
