// The timelines send pages spliced from cached JSON (services/core/entities/statusPageJson.ts):
// the text must be exactly JSON.stringify of the objects presentStatusPage makes, for every kind
// of status and viewer (reblogs, polls, own and pinned statuses, muted conversations, filters,
// role badges, quote posts in every state, quote policies), with caches cold and warm; and single
// statuses, rendered as pages of one, follow Mastodon's rule for a reblog's flags.
import type { Core } from '../../../services/core/context.ts';
import { parseId, type Id } from '../../../services/core/ids.ts';
import type { PageOptions } from '../../../services/core/entities/statusPage.ts';
import { presentStatus, presentStatusPage, presentStatuses } from '../../../services/core/entities/statusRender.ts';
import { presentStatusJson, presentStatusPageJson } from '../../../services/core/entities/statusPageJson.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { recordFollow } from '../../../services/core/graph/relations.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import type { JsonClient } from '../../support/http.ts';

let api: TestApi;
let core: Core;
let call: JsonClient;
let author: TestUser;
let viewer: TestUser;
let filtering: TestUser;
const ids: Id[] = [];
let reblogId: Id;
let doomedId: Id;

async function post(user: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  ids.unshift(parseId(res.body.id) as Id);
  return res.body.id as string;
}

beforeAll(async () => {
  api = await startTestApi();
  ({ core, call } = api);
  author = await createTestUser(core, { username: 'jsonauthor', role: 'Admin' });
  viewer = await createTestUser(core, { username: 'jsonviewer' });
  filtering = await createTestUser(core, { username: 'jsonfilter' });
  await recordFollow(core, viewer.account._id, author.account._id);
  const plain = await post(author, { status: 'hello "world" \u2028 <b>é</b> #tag @jsonviewer' });
  await post(author, { status: 'a poll', poll: { options: ['yes ✓', 'no 🙅'], expires_in: 3600 } });
  await post(author, { status: 'careful', spoiler_text: 'spoiler words' });
  const own = await post(viewer, { status: 'my own words' });
  await post(viewer, { status: 'unlisted own', visibility: 'unlisted' });
  const reblogged = await call('POST', `/api/v1/statuses/${plain}/reblog`, viewer.token);
  expect(reblogged.status).toBe(200);
  reblogId = parseId(reblogged.body.id) as Id;
  ids.unshift(reblogId);
  for (const action of ['favourite', 'bookmark', 'mute'])
    expect((await call('POST', `/api/v1/statuses/${plain}/${action}`, viewer.token)).status).toBe(200);
  expect((await call('POST', `/api/v1/statuses/${own}/pin`, viewer.token)).status).toBe(200);
  const filter = await call('POST', '/api/v2/filters', filtering.token, {
    title: 'wörds',
    context: ['home', 'public'],
    filter_action: 'warn',
    keywords_attributes: [{ keyword: 'words' }, { keyword: 'hello' }],
  });
  expect(filter.status).toBe(200);
  // Quote posts: accepted, of a followers-only own post, reblogged, revoked, of a deleted status,
  // and a policy naming followers (quote_approval.current_user depends on the viewer).
  const quotable = await post(author, { status: 'quote me', quote_approval_policy: 'public' });
  await post(viewer, { status: 'quoting it', quoted_status_id: quotable });
  const followersOnly = await post(author, { status: 'followers may quote', quote_approval_policy: 'followers' });
  const quoteOfQuote = await post(author, { status: 'quoting a quote', quoted_status_id: followersOnly });
  await post(viewer, { status: 'quoting the quote', quoted_status_id: quoteOfQuote });
  const ownPrivate = await post(author, { status: 'private words', visibility: 'private' });
  await post(author, { status: 'quoting my private post', quoted_status_id: ownPrivate });
  const quoteReblog = await call('POST', `/api/v1/statuses/${quoteOfQuote}/reblog`, viewer.token);
  expect(quoteReblog.status).toBe(200);
  ids.unshift(parseId(quoteReblog.body.id) as Id);
  const revoked = await post(viewer, { status: 'to be revoked', quoted_status_id: followersOnly });
  expect((await call('POST', `/api/v1/statuses/${followersOnly}/quotes/${revoked}/revoke`, author.token)).status).toBe(
    200,
  );
  const doomed = await post(author, { status: 'soon gone', quote_approval_policy: 'public' });
  doomedId = parseId(doomed) as Id;
  await post(viewer, { status: 'quoting what goes', quoted_status_id: doomed });
  expect((await call('DELETE', `/api/v1/statuses/${doomed}`, author.token)).status).toBe(200);
});

afterAll(() => api?.close());

const cases: [string, () => TestUser | null, PageOptions['check']][] = [
  ['no viewer', () => null, 'policy'],
  ['the viewer (feed)', () => viewer, 'feed'],
  ['the viewer (policy)', () => viewer, 'policy'],
  ['the author', () => author, 'feed'],
  ['a viewer with filters', () => filtering, 'policy'],
];

it.each(cases)('spliced JSON equals the stringified page for %s', async (_name, who, check) => {
  const account = who()?.account ?? null;
  const opts: PageOptions = { check, hideLimited: check === 'policy' };
  // Twice: the first from cold caches (renderings made now), the second from the cached copies.
  for (let round = 0; round < 2; round++) {
    const expected = JSON.stringify(await presentStatusPage(core, ids, account, opts));
    const spliced = await presentStatusPageJson(core, ids, account, opts);
    expect(spliced).toBe(expected);
    expect((JSON.parse(spliced) as unknown[]).length).toBeGreaterThan(0);
  }
});

it('an empty page is []', async () => {
  expect(await presentStatusPageJson(core, [], viewer.account, { check: 'feed' })).toBe('[]');
});

it('the page covers what the comparison is meant to cover', async () => {
  const seen = await presentStatusPageJson(core, ids, viewer.account, { check: 'feed' });
  for (const part of [
    '"reblog":{',
    '"poll":{',
    '"pinned":true',
    '"muted":true',
    '"favourited":true',
    '"roles":[{',
    '"quote":{"state":"accepted","quoted_status":{',
    '"quote":{"state":"revoked","quoted_status":null}',
    '"quote":{"state":"deleted","quoted_status":null}',
    '"quotes_count":1',
    '"current_user":"automatic"',
  ])
    expect(seen).toContain(part);
  // The nested quoted status carries its own quote as a ShallowQuote.
  expect(seen).toMatch(/"quote":\{"state":"accepted","quoted_status_id":"\d+"\}/);
  const filtered = await presentStatusPageJson(core, ids, filtering.account, { check: 'policy' });
  expect(filtered).toContain('"filtered":[{');
});

it('a single status is its page of one, non-ASCII text included', async () => {
  for (const id of ids.slice(1)) {
    const page = JSON.stringify(await presentStatusPage(core, [id], viewer.account, { check: 'policy' }));
    const single = await presentStatusJson(core, id, viewer.account);
    if (page === '[]') expect(single).toBeNull();
    // A reblog on its own shows its original's flags (the next test).
    else if ((JSON.parse(page) as { reblog: unknown }[])[0].reblog === null) expect(`[${String(single)}]`).toBe(page);
  }
  const plain = await presentStatusPageJson(core, ids, viewer.account, { check: 'feed' });
  for (const text of ['\u2028', '&lt;b&gt;é', 'yes ✓', 'no 🙅']) expect(plain).toContain(text);
});

it("a reblog on its own shows its original's flags, in a list its own (Mastodon's status.proper)", async () => {
  const [doc] = await collection(core.db, statuses).find({ _id: reblogId }).toArray();
  const single = await presentStatus(core, doc, viewer.account);
  expect([single.favourited, single.bookmarked, single.reblogged]).toEqual([true, true, true]);
  expect(JSON.parse(String(await presentStatusJson(core, reblogId, viewer.account)))).toEqual(single);
  const [listed] = await presentStatusPage(core, [reblogId], viewer.account, { check: 'feed' });
  expect([listed.favourited, listed.bookmarked, listed.reblogged]).toEqual([false, false, false]);
  expect(listed.reblog?.favourited).toBe(true);
  const [inList] = await presentStatuses(core, [doc], viewer.account);
  expect(inList).toEqual(listed);
});

it('given statuses render whatever their state, and a redraft answer carries the source', async () => {
  const [gone] = await collection(core.db, statuses).find({ _id: doomedId }).toArray();
  expect(gone.deletedAt).not.toBeNull();
  expect(await presentStatusPage(core, [doomedId], author.account, { check: 'feed' })).toEqual([]);
  const [shown] = await presentStatuses(core, [gone], author.account);
  expect(shown).toMatchObject({ id: String(doomedId), content: expect.stringContaining('soon gone') });
  const redraft = await presentStatus(core, gone, author.account, { source: true });
  expect(redraft.text).toBe('soon gone');
  expect(redraft).not.toHaveProperty('content');
});
