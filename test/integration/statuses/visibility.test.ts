// The visibility matrix: for each visibility and each viewer, read, context, favourite and reblog
// answer as Mastodon's StatusPolicy does (invisible → 404; visible but not rebloggable → 403).
import type { Core } from '../../../services/core/context.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { recordBlock, recordFollow } from '../../../services/core/graph/relations.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import type { JsonClient } from '../../support/http.ts';

type Viewer = 'author' | 'follower' | 'mentioned' | 'stranger' | 'anonymous';
type Visibility = 'public' | 'unlisted' | 'private' | 'direct';

// [read, context, favourite, reblog] expected status codes.
const MATRIX: Record<Visibility, Record<Viewer, [number, number, number, number]>> = {
  public: {
    author: [200, 200, 200, 200],
    follower: [200, 200, 200, 200],
    mentioned: [200, 200, 200, 200],
    stranger: [200, 200, 200, 200],
    anonymous: [200, 200, 401, 401],
  },
  unlisted: {
    author: [200, 200, 200, 200],
    follower: [200, 200, 200, 200],
    mentioned: [200, 200, 200, 200],
    stranger: [200, 200, 200, 200],
    anonymous: [200, 200, 401, 401],
  },
  private: {
    author: [200, 200, 200, 200],
    follower: [200, 200, 200, 403],
    mentioned: [200, 200, 200, 403],
    stranger: [404, 404, 404, 404],
    anonymous: [404, 404, 401, 401],
  },
  direct: {
    author: [200, 200, 200, 403],
    follower: [404, 404, 404, 404],
    mentioned: [200, 200, 200, 403],
    stranger: [404, 404, 404, 404],
    anonymous: [404, 404, 401, 401],
  },
};

let api: TestApi;
let core: Core;
let call: JsonClient;
const users = {} as Record<Exclude<Viewer, 'anonymous'>, TestUser>;
const statusIds = {} as Record<Visibility, string>;

beforeAll(async () => {
  api = await startTestApi();
  ({ core, call } = api);
  users.author = await createTestUser(core, { username: 'author' });
  users.follower = await createTestUser(core, { username: 'follower' });
  users.mentioned = await createTestUser(core, { username: 'mentioned' });
  users.stranger = await createTestUser(core, { username: 'stranger' });
  await recordFollow(core, users.follower.account._id, users.author.account._id);
  for (const visibility of ['public', 'unlisted', 'private', 'direct'] as Visibility[]) {
    const res = await call('POST', '/api/v1/statuses', users.author.token, {
      status: `hello @mentioned (${visibility})`,
      visibility,
    });
    expect(res.status).toBe(200);
    statusIds[visibility] = res.body.id;
  }
});

afterAll(() => api?.close());

const cases = (Object.keys(MATRIX) as Visibility[]).flatMap((v) =>
  (Object.keys(MATRIX[v]) as Viewer[]).map((viewer) => [v, viewer] as const),
);

it.each(cases)('%s status seen by %s', async (visibility, viewer) => {
  const token = viewer === 'anonymous' ? null : users[viewer].token;
  const id = statusIds[visibility];
  const [read, context, favourite, reblog] = MATRIX[visibility][viewer];
  const got = [
    (await call('GET', `/api/v1/statuses/${id}`, token)).status,
    (await call('GET', `/api/v1/statuses/${id}/context`, token)).status,
    (await call('POST', `/api/v1/statuses/${id}/favourite`, token)).status,
    (await call('POST', `/api/v1/statuses/${id}/reblog`, token)).status,
  ];
  expect(got).toEqual([read, context, favourite, reblog]);
  if (read === 404) {
    const missing = await call('GET', `/api/v1/statuses/${id}`, token);
    expect(missing.body).toEqual({ error: 'Record not found' });
  }
});

it('hides a public status from a viewer its author blocks', async () => {
  const blocked = await createTestUser(core);
  await recordBlock(core, users.author.account._id, blocked.account._id);
  expect((await call('GET', `/api/v1/statuses/${statusIds.public}`, blocked.token)).status).toBe(404);
  expect((await call('GET', `/api/v1/statuses/${statusIds.public}`, null)).status).toBe(200);
});
