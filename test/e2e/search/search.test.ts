// GET /api/v2/search over HTTP with the search-index pipeline consuming the real status events:
// relevance (every word must match, newest first), the visibility rules (a private status never
// reaches a stranger; public statuses only of indexable accounts; own, mentioned, favourited and
// bookmarked statuses for their account), the operators, hashtags with history, accounts, URLs,
// edits and deletes, pagination and the authentication requirement.
import type { Core } from '../../../services/core/context.ts';
import { runSearchIndexPipeline } from '../../../pipelines/search-index/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { postingKey } from '../../../services/core/search/statusIndex.ts';
import { pseudoTerm } from '../../../services/core/search/tokenize.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let alice: TestUser, bob: TestUser, carol: TestUser, shy: TestUser;
const ids: Record<string, string> = {};

type Results = {
  accounts: { id: string; acct: string }[];
  statuses: { id: string; content: string; bookmarked?: boolean; account: { id: string } }[];
  hashtags: { name: string; history: unknown[] }[];
};

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const search = async (token: string, qs: string): Promise<Results> => {
  const res = await call('GET', `/api/v2/search?${qs}`, token);
  expect(res.status).toBe(200);
  return res.body as Results;
};
const statusIds = async (token: string, q: string, extra = '') =>
  (await search(token, `q=${encodeURIComponent(q)}&type=statuses${extra}`)).statuses.map((s) => s.id);

/** Waits until the pipeline has indexed a status (its author id term in the author's own scope). */
async function indexed(authorId: bigint, statusId: string): Promise<void> {
  await eventually(
    async () => (await core.redis.zscore(postingKey(authorId, pseudoTerm.from(authorId)), statusId)) !== null,
    30_000,
    `status ${statusId} indexed`,
  );
}

async function post(user: TestUser, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  ids[key] = res.body.id as string;
  await indexed(user.account._id, ids[key]);
  return ids[key];
}

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runSearchIndexPipeline(core, consumerTuning);
  [alice, bob, carol, shy] = await Promise.all(Array.from({ length: 4 }, () => createTestUser(core)));
  for (const u of [alice, bob])
    expect((await call('PATCH', '/api/v1/accounts/update_credentials', u.token, { indexable: true })).status).toBe(200);
  await post(alice, 'apple', { status: 'Crunchy apple pie recipe with #baking tips', language: 'en' });
  await post(alice, 'applePrivate', { status: 'Secret apple pie recipe', visibility: 'private' });
  await post(bob, 'appleBob', { status: 'Apple pie in the garden', language: 'de' });
  await post(bob, 'pear', { status: 'Pear tart, no apples here', sensitive: true, spoiler_text: 'fruit' });
  await post(bob, 'reply', { status: 'An apple a day', in_reply_to_id: ids.apple });
  await post(bob, 'poll', {
    status: 'Which apple variety wins?',
    poll: { options: ['Gala', 'Fuji'], expires_in: 3600 },
  });
  await post(carol, 'mention', {
    status: `@${alice.account.username} direct apple question`,
    visibility: 'direct',
  });
  // shy is not indexable: public posts stay out of strangers' searches.
  await post(shy, 'shy', { status: 'Shy apple pie thoughts' });
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

test('authentication is required, q is required, bad input is a 4xx', async () => {
  expect((await call('GET', '/api/v2/search?q=apple')).status).toBe(401);
  expect((await call('GET', '/api/v2/search', alice.token)).status).toBe(400);
  // The removed v1 endpoint.
  expect((await call('GET', '/api/v1/search?q=apple', alice.token)).status).toBe(404);
  const res = await call('GET', '/api/v2/search?q=apple&limit=abc&offset=-4&max_id=zz', alice.token);
  expect(res.status).toBe(200);
});

test('every word must match; newest first; a stranger finds public posts of indexable accounts only', async () => {
  const found = await statusIds(carol.token, 'apple pie');
  expect(found).toEqual([ids.appleBob, ids.apple]);
  expect(found).not.toContain(ids.applePrivate);
  expect(found).not.toContain(ids.shy);
  // Case, accents and punctuation do not matter.
  expect(await statusIds(carol.token, 'ÁPPLE, PIE!')).toEqual([ids.appleBob, ids.apple]);
  expect(await statusIds(carol.token, 'apple pie zebra')).toEqual([]);
  // An author who blocks the caller is not found by them.
  expect((await call('POST', `/api/v1/accounts/${carol.account._id}/block`, bob.token)).status).toBe(200);
  expect(await statusIds(carol.token, 'apple pie')).toEqual([ids.apple]);
  expect((await call('POST', `/api/v1/accounts/${carol.account._id}/unblock`, bob.token)).status).toBe(200);
  expect(await statusIds(carol.token, 'apple pie')).toEqual([ids.appleBob, ids.apple]);
});

test('private statuses are found only by those who may see them', async () => {
  // The author finds her own private and the DM she was mentioned in.
  const own = await statusIds(alice.token, 'apple');
  expect(own).toEqual(
    expect.arrayContaining([ids.apple, ids.applePrivate, ids.mention, ids.appleBob, ids.reply, ids.poll]),
  );
  expect(await statusIds(bob.token, 'secret')).toEqual([]);
  expect(await statusIds(bob.token, 'direct question')).toEqual([]);
  expect(await statusIds(carol.token, 'direct question')).toEqual([ids.mention]);
  // shy's own public post is in shy's scope.
  expect(await statusIds(shy.token, 'shy')).toEqual([ids.shy]);
});

test('favourites and bookmarks make a status searchable for the one who did it', async () => {
  expect(await statusIds(carol.token, 'shy thoughts')).toEqual([]);
  expect((await call('POST', `/api/v1/statuses/${ids.shy}/favourite`, carol.token)).status).toBe(200);
  await eventually(
    async () => (await statusIds(carol.token, 'shy thoughts')).length === 1,
    30_000,
    'favourited status searchable',
  );
  expect((await call('POST', `/api/v1/statuses/${ids.shy}/bookmark`, bob.token)).status).toBe(200);
  expect(await statusIds(bob.token, 'shy thoughts')).toEqual([ids.shy]);
  expect(await statusIds(alice.token, 'shy thoughts')).toEqual([]);
});

test('operators: from:, has:, is:, language:, before:/after:, exclusions and phrases', async () => {
  expect(await statusIds(alice.token, `apple from:${bob.account.username}`)).toEqual([
    ids.poll,
    ids.reply,
    ids.appleBob,
  ]);
  expect(await statusIds(alice.token, 'apple from:me')).toEqual([ids.applePrivate, ids.apple]);
  expect(await statusIds(alice.token, 'from:nobody_here apple')).toEqual([]);
  expect(await statusIds(alice.token, 'apple has:poll')).toEqual([ids.poll]);
  expect(await statusIds(alice.token, 'apple is:reply')).toEqual([ids.reply]);
  expect(await statusIds(alice.token, 'pear is:sensitive')).toEqual([ids.pear]);
  expect(await statusIds(alice.token, 'fruit')).toEqual([ids.pear]); // content warnings are searchable
  expect(await statusIds(alice.token, 'apple pie language:de')).toEqual([ids.appleBob]);
  expect(await statusIds(alice.token, 'apple pie -garden')).toEqual([ids.applePrivate, ids.apple]);
  expect(await statusIds(alice.token, '"pie recipe"')).toEqual([ids.applePrivate, ids.apple]);
  expect(await statusIds(alice.token, '"recipe pie"')).toEqual([]);
  expect(await statusIds(alice.token, 'apple before:2000-01-01')).toEqual([]);
  expect((await statusIds(alice.token, 'apple pie after:2000-01-01')).length).toBe(3);
  expect(await statusIds(alice.token, 'apple', `&account_id=${bob.account._id}`)).toEqual([
    ids.poll,
    ids.reply,
    ids.appleBob,
  ]);
});

test('pagination: limit, offset with a type, max_id and min_id', async () => {
  const all = await statusIds(alice.token, 'apple');
  expect(all.length).toBeGreaterThanOrEqual(6);
  expect(await statusIds(alice.token, 'apple', '&limit=2')).toEqual(all.slice(0, 2));
  expect(await statusIds(alice.token, 'apple', '&limit=2&offset=2')).toEqual(all.slice(2, 4));
  expect(await statusIds(alice.token, 'apple', `&max_id=${all[1]}`)).toEqual(all.slice(2));
  expect(await statusIds(alice.token, 'apple', `&min_id=${all[2]}`)).toEqual(all.slice(0, 2));
  // Without a type the offset is ignored.
  const untyped = await search(alice.token, 'q=apple&offset=3&limit=1');
  expect(untyped.statuses.map((s) => s.id)).toEqual(all.slice(0, 1));
});

test('edits and deletes reach the index', async () => {
  const id = await post(alice, 'edited', { status: 'Original banana bread' });
  expect(await statusIds(carol.token, 'banana')).toEqual([id]);
  expect((await call('PUT', `/api/v1/statuses/${id}`, alice.token, { status: 'Now a mango smoothie' })).status).toBe(
    200,
  );
  await eventually(async () => (await statusIds(carol.token, 'mango')).length === 1, 30_000, 'edit indexed');
  expect(await statusIds(carol.token, 'banana')).toEqual([]);
  expect((await call('DELETE', `/api/v1/statuses/${id}`, alice.token)).status).toBe(200);
  expect(await statusIds(carol.token, 'mango')).toEqual([]);
});

test('accounts, hashtags with history, and URLs of local objects', async () => {
  const byName = await search(carol.token, `q=${alice.account.username}&type=accounts`);
  expect(byName.accounts.map((a) => a.id)).toContain(String(alice.account._id));
  const tags = await search(carol.token, 'q=%23bak&type=hashtags');
  expect(tags.hashtags.map((t) => t.name)).toEqual(['baking']);
  expect(tags.hashtags[0]!.history).toHaveLength(7);
  // exclude_unreviewed: no tag has been reviewed yet.
  expect((await search(carol.token, 'q=bak&type=hashtags&exclude_unreviewed=true')).hashtags).toEqual([]);
  // A `#` query searches no accounts, an `@` query no hashtags or statuses.
  const hashOnly = await search(carol.token, 'q=%23apple');
  expect(hashOnly.accounts).toEqual([]);
  const statusUrl = `${core.config.baseUrl}/@${alice.account.username}/${ids.apple}`;
  const byUrl = await search(carol.token, `q=${encodeURIComponent(statusUrl)}`);
  expect(byUrl.statuses.map((s) => s.id)).toEqual([ids.apple]);
  const privateUrl = `${core.config.baseUrl}/@${alice.account.username}/${ids.applePrivate}`;
  expect((await search(carol.token, `q=${encodeURIComponent(privateUrl)}`)).statuses).toEqual([]);
  const accountUrl = `${core.config.baseUrl}/users/${bob.account.username}`;
  expect(
    (await search(carol.token, `q=${encodeURIComponent(accountUrl)}&resolve=true`)).accounts.map((a) => a.id),
  ).toEqual([String(bob.account._id)]);
});

test('an account switching indexable brings its public posts into (and out of) strangers searches', async () => {
  expect(await statusIds(alice.token, 'shy thoughts')).toEqual([]);
  expect((await call('PATCH', '/api/v1/accounts/update_credentials', shy.token, { indexable: true })).status).toBe(200);
  await eventually(
    async () => (await statusIds(alice.token, 'shy thoughts')).length === 1,
    30_000,
    'public posts re-indexed',
  );
  expect((await call('PATCH', '/api/v1/accounts/update_credentials', shy.token, { indexable: false })).status).toBe(
    200,
  );
  // Hidden at once by the read-back check, then removed from the public scope.
  expect(await statusIds(alice.token, 'shy thoughts')).toEqual([]);
  await eventually(
    async () => (await core.redis.zscore(postingKey('public', 'thoughts'), ids.shy as string)) === null,
    30_000,
    'public postings removed',
  );
});

test('the read-back check: silenced authors reach only followers, suspended ones nobody, private posts only while visible', async () => {
  const [dave, erin] = await Promise.all([createTestUser(core), createTestUser(core)]);
  expect((await call('PATCH', '/api/v1/accounts/update_credentials', dave.token, { indexable: true })).status).toBe(
    200,
  );
  expect((await call('POST', `/api/v1/accounts/${dave.account._id}/follow`, erin.token)).status).toBe(200);
  const open = await post(dave, 'kiwiPublic', { status: 'Kiwi sorbet for everyone' });
  const closed = await post(dave, 'kiwiPrivate', { status: 'Kiwi sorbet for followers', visibility: 'private' });
  // erin bookmarks the private post: in her own scope, and visible while she follows dave.
  expect((await call('POST', `/api/v1/statuses/${closed}/bookmark`, erin.token)).status).toBe(200);
  expect(await statusIds(erin.token, 'kiwi sorbet')).toEqual([closed, open]);
  expect(await statusIds(carol.token, 'kiwi sorbet')).toEqual([open]);
  // Rendered for the caller (flags included).
  const rendered = (await search(erin.token, 'q=kiwi+sorbet&type=statuses')).statuses;
  expect(rendered.map((st) => [st.id, st.bookmarked, st.account.id])).toEqual([
    [closed, true, String(dave.account._id)],
    [open, false, String(dave.account._id)],
  ]);

  const setAuthor = (fields: { silencedAt?: Date | null; suspendedAt?: Date | null }) =>
    collection(core.db, accounts).updateOne({ _id: dave.account._id }, { $set: fields });
  await setAuthor({ silencedAt: new Date() });
  expect(await statusIds(carol.token, 'kiwi sorbet')).toEqual([]);
  expect(await statusIds(erin.token, 'kiwi sorbet')).toEqual([closed, open]);
  expect(await statusIds(dave.token, 'kiwi sorbet')).toEqual([closed, open]);
  await setAuthor({ silencedAt: null, suspendedAt: new Date() });
  expect(await statusIds(carol.token, 'kiwi sorbet')).toEqual([]);
  expect(await statusIds(erin.token, 'kiwi sorbet')).toEqual([]);
  await setAuthor({ suspendedAt: null });
  expect(await statusIds(carol.token, 'kiwi sorbet')).toEqual([open]);

  // Unfollowed: the bookmark stays in erin's scope, but the private post is no longer hers to see.
  expect((await call('POST', `/api/v1/accounts/${dave.account._id}/unfollow`, erin.token)).status).toBe(200);
  expect(await statusIds(erin.token, 'kiwi sorbet')).toEqual([open]);
});
