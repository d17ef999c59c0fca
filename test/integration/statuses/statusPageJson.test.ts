// The timelines send pages spliced from cached JSON (services/core/entities/statusPageJson.ts):
// the text must be exactly JSON.stringify of the objects presentStatusPage makes, for every kind
// of status and viewer (reblogs, polls, own and pinned statuses, muted conversations, filters,
// role badges), with caches cold and warm.
import type { Core } from '../../../services/core/context.ts';
import { parseId, type Id } from '../../../services/core/ids.ts';
import { presentStatusPage, type PageOptions } from '../../../services/core/entities/statusPage.ts';
import { presentStatusPageJson } from '../../../services/core/entities/statusPageJson.ts';
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
  await post(author, { status: 'a poll', poll: { options: ['yes', 'no'], expires_in: 3600 } });
  await post(author, { status: 'careful', spoiler_text: 'spoiler words' });
  const own = await post(viewer, { status: 'my own words' });
  await post(viewer, { status: 'unlisted own', visibility: 'unlisted' });
  const reblogged = await call('POST', `/api/v1/statuses/${plain}/reblog`, viewer.token);
  expect(reblogged.status).toBe(200);
  ids.unshift(parseId(reblogged.body.id) as Id);
  for (const action of ['favourite', 'bookmark', 'mute'])
    expect((await call('POST', `/api/v1/statuses/${plain}/${action}`, viewer.token)).status).toBe(200);
  expect((await call('POST', `/api/v1/statuses/${own}/pin`, viewer.token)).status).toBe(200);
  const filter = await call('POST', '/api/v2/filters', filtering.token, {
    title: 'words',
    context: ['home', 'public'],
    filter_action: 'warn',
    keywords_attributes: [{ keyword: 'words' }, { keyword: 'hello' }],
  });
  expect(filter.status).toBe(200);
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
  for (const part of ['"reblog":{', '"poll":{', '"pinned":true', '"muted":true', '"favourited":true', '"roles":[{'])
    expect(seen).toContain(part);
  const filtered = await presentStatusPageJson(core, ids, filtering.account, { check: 'policy' });
  expect(filtered).toContain('"filtered":[{');
});
