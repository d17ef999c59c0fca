// Edits and per-connection filtering on the streaming API, and the feed access settings, end to
// end: the API writes, the fan-out pipeline consumes from Kafka and publishes on Redis, the
// uWebSockets.js server filters per connection.
import type { Core } from '../../../services/core/context.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { settings } from '../../../services/core/model/settings.ts';
import { FEED_ACCESS_SETTINGS, setFeedAccess } from '../../../services/core/settings/feedAccess.ts';
import { publishToStream, timelineChannels } from '../../../services/core/streaming/channels.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { Client, live as goLive, post as postStatus, statusOf } from './wsClient.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let streaming: StreamingServer;

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runFanOutPipeline(core, consumerTuning);
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
});

afterAll(async () => {
  await streaming?.stop(1000);
  await pipeline?.stop();
  await api?.close();
});

afterEach(async () => {
  await collection(core.db, settings).deleteMany({ _id: { $in: [...FEED_ACCESS_SETTINGS] } });
});

const open = (query: string) => Client.open(streaming.port, query);
const post = (user: TestUser, body: Record<string, unknown>) => postStatus(api.call, user, body);
const live = (client: Client, author: TestUser, body: Record<string, unknown>) =>
  goLive(api.call, client, author, body);

/** Proves (by a later status that does arrive) that `id` was not delivered to `client`. */
async function notDelivered(client: Client, author: TestUser, id: string): Promise<void> {
  await live(client, author, { status: 'a later probe' });
  expect(client.messages.some((m) => m.payload && statusOf(m).id === id)).toBe(false);
}

test('an edit reaches the user and public streams as status.update, and timelines show the edited text', async () => {
  const reader = await createTestUser(core);
  const author = await createTestUser(core);
  await api.call('POST', `/api/v1/accounts/${author.account._id}/follow`, reader.token);
  const user = await open(`access_token=${reader.token}&stream=user`);
  const pub = await open(`stream=public:local`);
  try {
    await live(user, author, { status: 'warming up' });
    await live(pub, author, { status: 'warming up' });
    const id = await post(author, { status: 'first version' });
    await user.waitFor((m) => m.event === 'update' && statusOf(m).id === id, 'update');
    // The first render is cached for the timelines: the edit must replace it.
    const before = await api.call('GET', '/api/v1/timelines/home', reader.token);
    expect(before.body.find((s: { id: string }) => s.id === id).content).toContain('first version');

    const edit = await api.call('PUT', `/api/v1/statuses/${id}`, author.token, { status: 'second version' });
    expect(edit.status).toBe(200);
    for (const client of [user, pub]) {
      const m = await client.waitFor(
        (x) => x.event === 'status.update' && statusOf(x).id === id,
        'status.update after the edit',
      );
      expect(statusOf(m).content).toContain('second version');
    }
    const after = await api.call('GET', '/api/v1/timelines/home', reader.token);
    const shown = after.body.find((s: { id: string }) => s.id === id);
    expect(shown.content).toContain('second version');
    expect(shown.edited_at).not.toBeNull();
    const publicTimeline = await api.call('GET', '/api/v1/timelines/public?local=true');
    expect(publicTimeline.body.find((s: { id: string }) => s.id === id).content).toContain('second version');
  } finally {
    user.close();
    pub.close();
  }
});

test('public streams: chosen languages, custom filters (hide drops, warn annotates), blocked domains', async () => {
  const viewer = await createTestUser(core);
  const poster = await createTestUser(core);
  await collection(core.db, users).updateOne(
    { _id: viewer.user._id },
    { $set: { 'settings.chosenLanguages': ['en'] } },
  );
  const hide = await api.call('POST', '/api/v2/filters', viewer.token, {
    title: 'no spoilers',
    context: ['public'],
    filter_action: 'hide',
    keywords_attributes: [{ keyword: 'spoilerword' }],
  });
  expect(hide.status).toBe(200);
  const warn = await api.call('POST', '/api/v2/filters', viewer.token, {
    title: 'careful',
    context: ['public'],
    filter_action: 'warn',
    keywords_attributes: [{ keyword: 'warnword' }],
  });
  expect(warn.status).toBe(200);
  await api.call('POST', '/api/v1/domain_blocks', viewer.token, { domain: 'blocked.example' });

  const client = await open(`access_token=${viewer.token}&stream=public:local`);
  try {
    await live(client, poster, { status: 'warming up', language: 'en' });
    const german = await post(poster, { status: 'auf Deutsch', language: 'de' });
    await notDelivered(client, poster, german);

    const hidden = await post(poster, { status: 'has the spoilerword in it', language: 'en' });
    await notDelivered(client, poster, hidden);

    const warned = await post(poster, { status: 'has the warnword in it', language: 'en' });
    const m = await client.waitFor((x) => x.event === 'update' && statusOf(x).id === warned, 'warned update');
    expect(statusOf(m).filtered).toEqual([
      expect.objectContaining({ filter: expect.objectContaining({ title: 'careful' }), keyword_matches: ['warnword'] }),
    ]);

    // A status of an account on a domain the viewer blocks, as the fan-out would publish it.
    const remoteId = '1234567890123456789';
    const remote = {
      id: remoteId,
      language: 'en',
      content: '<p>from afar</p>',
      spoiler_text: '',
      account: { id: '987654321', acct: 'someone@blocked.example' },
      mentions: [],
      reblog: null,
    };
    await publishToStream(core.redis, core.config, timelineChannels.public('local'), {
      event: 'update',
      payload: JSON.stringify(remote),
    });
    await notDelivered(client, poster, remoteId);
  } finally {
    client.close();
  }
});

test('feed access settings: logged-out readers need public feeds; disabled origins are left out', async () => {
  const user = await createTestUser(core);
  const poster = await createTestUser(core);
  const id = await post(poster, { status: 'local and public #accesstag' });

  await setFeedAccess(core, 'local_live_feed_access', 'authenticated');
  expect((await api.call('GET', '/api/v1/timelines/public?local=true')).status).toBe(422);
  expect((await api.call('GET', '/api/v1/timelines/public')).status).toBe(422);
  expect((await api.call('GET', '/api/v1/timelines/public?remote=true')).status).toBe(200);
  const signedIn = await api.call('GET', '/api/v1/timelines/public?local=true', user.token);
  expect(signedIn.status).toBe(200);
  expect(signedIn.body.map((s: { id: string }) => s.id)).toContain(id);
  // The hashtag feed has its own setting, still public.
  const tag = await api.call('GET', '/api/v1/timelines/tag/accesstag');
  expect(tag.body.map((s: { id: string }) => s.id)).toContain(id);
  const instance = await api.call('GET', '/api/v2/instance');
  expect(instance.body.configuration.timelines_access.live_feeds).toEqual({ local: 'authenticated', remote: 'public' });

  // A logged-out stream of a feed that is not public is refused; signed in, it works.
  const anonymous = await open('stream=public:local');
  try {
    await anonymous.waitFor((m) => m.error === 'Missing access token', 'refusal');
  } finally {
    anonymous.close();
  }

  // Disabled: only roles with view_feeds; the feed is then empty for others.
  await setFeedAccess(core, 'local_topic_feed_access', 'disabled');
  const disabled = await api.call('GET', '/api/v1/timelines/tag/accesstag?local=true', user.token);
  expect(disabled.status).toBe(200);
  expect(disabled.body).toEqual([]);
  const owner = await createTestUser(core, { role: 'Owner' });
  const allowed = await api.call('GET', '/api/v1/timelines/tag/accesstag?local=true', owner.token);
  expect(allowed.body.map((s: { id: string }) => s.id)).toContain(id);
});
