// Silenced (limited) accounts: their posts leave public and hashtag timelines and account search
// for those who do not follow them, and their notifications to others are filtered into requests; sensitized accounts'
// media is forced sensitive.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { png } from '../../support/mediaFiles.ts';

jest.setTimeout(120_000);

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let loud: TestUser, fan: TestUser, stranger: TestUser, moderator: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const ids = (list: { id: string }[]) => list.map((x) => x.id);

beforeAll(async () => {
  api = await startTestApi({}, { mediaDir: true });
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  [loud, fan, stranger] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
  moderator = await createTestUser(core, { role: 'Moderator', scopes: ['read', 'write', 'admin:read', 'admin:write'] });
  await call('POST', `/api/v1/accounts/${loud.account._id}/follow`, fan.token);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

test('a silenced account reaches only its followers', async () => {
  const post = (await call('POST', '/api/v1/statuses', loud.token, { status: 'shouting #loud' })).body.id as string;
  const visibleTo = async (token: string | null) => ({
    public: ids((await call('GET', '/api/v1/timelines/public', token)).body).includes(post),
    tag: ids((await call('GET', '/api/v1/timelines/tag/loud', token)).body).includes(post),
    search: ids(
      (await call('GET', `/api/v1/accounts/search?q=${loud.account.username}`, token ?? fan.token)).body,
    ).includes(String(loud.account._id)),
  });
  expect(await visibleTo(stranger.token)).toEqual({ public: true, tag: true, search: true });

  await call('POST', `/api/v1/admin/accounts/${loud.account._id}/action`, moderator.token, { type: 'silence' });
  expect(await visibleTo(stranger.token)).toEqual({ public: false, tag: false, search: false });
  expect((await visibleTo(null)).public).toBe(false);
  expect(await visibleTo(fan.token)).toEqual({ public: true, tag: true, search: true });
  // The post itself stays reachable, and the author sees their own posts.
  expect((await call('GET', `/api/v1/statuses/${post}`, stranger.token)).status).toBe(200);
  expect(ids((await call('GET', '/api/v1/timelines/public', loud.token)).body)).toContain(post);

  // Notifications: to a follower yes, to a stranger no.
  const fanPost = (await call('POST', '/api/v1/statuses', fan.token, { status: 'fan' })).body.id;
  const strangerPost = (await call('POST', '/api/v1/statuses', stranger.token, { status: 'stranger' })).body.id;
  await call('POST', `/api/v1/statuses/${strangerPost}/favourite`, loud.token);
  await call('POST', `/api/v1/statuses/${fanPost}/favourite`, loud.token);
  await eventually(
    async () =>
      (await collection(core.db, notifications).countDocuments({ accountId: fan.account._id, type: 'favourite' })) ===
      1,
    30_000,
    "the follower's favourite notification",
  );
  // Favourite events are keyed by the favouriting account, so the stranger's was handled before
  // the fan's: filtered into a notification request, not shown in the list.
  expect(
    await collection(core.db, notifications).countDocuments({
      accountId: stranger.account._id,
      type: 'favourite',
      filtered: true,
    }),
  ).toBe(1);
  expect((await call('GET', '/api/v1/notifications', stranger.token)).body).toEqual([]);
  expect(
    (await call('GET', '/api/v1/notifications?include_filtered=true', stranger.token)).body.map(
      (n: { account: { id: string } }) => n.account.id,
    ),
  ).toEqual([String(loud.account._id)]);
  expect((await call('GET', '/api/v1/notifications', fan.token)).body[0]).toMatchObject({ type: 'favourite' });

  await call('POST', `/api/v1/admin/accounts/${loud.account._id}/unsilence`, moderator.token);
  expect(await visibleTo(stranger.token)).toEqual({ public: true, tag: true, search: true });
});

test("a sensitized account's media is marked sensitive", async () => {
  await call('POST', `/api/v1/admin/accounts/${loud.account._id}/action`, moderator.token, { type: 'sensitive' });
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(await png(8, 8))], { type: 'image/png' }), 'a.png');
  const media = (await (
    await fetch(`${api.server.url}/api/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${loud.token}` },
      body: form,
    })
  ).json()) as { id: string };
  const withMedia = await call('POST', '/api/v1/statuses', loud.token, { status: 'pic', media_ids: [media.id] });
  expect(withMedia.body.sensitive).toBe(true);
  const textOnly = await call('POST', '/api/v1/statuses', loud.token, { status: 'words' });
  expect(textOnly.body.sensitive).toBe(false);
});
