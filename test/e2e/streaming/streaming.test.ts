// The WebSocket streaming API end to end: the API writes, the fan-out pipeline consumes the events
// from Kafka and publishes on Redis, the uWebSockets.js server pushes to real WebSocket clients.
import type { Core } from '../../../services/core/context.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accessTokens } from '../../../services/core/model/oauth.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { users } from '../../../services/core/model/users.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { connectRedis } from '../../../services/core/db/redis.ts';
import { channelName, listenerKey, timelineChannels } from '../../../services/core/streaming/channels.ts';
import { feedKey } from '../../../services/core/feeds/feeds.ts';
import { activeKey, forgetActivityRefreshes } from '../../../services/core/feeds/activity.ts';
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

const open = (query: string, protocols?: string[]) => Client.open(streaming.port, query, protocols);
const post = (user: TestUser, body: Record<string, unknown>) => postStatus(api.call, user, body);
const live = (client: Client, author: TestUser, body: Record<string, unknown>) =>
  goLive(api.call, client, author, body);

test('user stream: a followed account’s post and its deletion arrive', async () => {
  const reader = await createTestUser(core);
  const author = await createTestUser(core);
  await api.call('POST', `/api/v1/accounts/${author.account._id}/follow`, reader.token);
  const client = await open(`access_token=${reader.token}&stream=user`);
  try {
    await live(client, author, { status: 'warming up' });
    const id = await post(author, { status: 'hello stream' });
    const update = await client.waitFor((m) => m.event === 'update' && statusOf(m).id === id, 'update');
    expect(update.stream).toEqual(['user']);
    expect(statusOf(update).content).toContain('hello stream');
    await api.call('DELETE', `/api/v1/statuses/${id}`, author.token);
    await client.waitFor((m) => m.event === 'delete' && m.payload === id, 'delete');
  } finally {
    client.close();
  }
});

test('a fan-out publishes only on the channels a streaming process listens to', async () => {
  const reader = await createTestUser(core);
  const away = await createTestUser(core);
  const author = await createTestUser(core);
  for (const u of [reader, away]) await api.call('POST', `/api/v1/accounts/${author.account._id}/follow`, u.token);
  const channel = (u: TestUser) => timelineChannels.user(u.account._id);
  expect(await core.redis.get(listenerKey(channel(away)))).toBeNull();
  const client = await open(`access_token=${reader.token}&stream=user`);
  // A raw subscriber on the other follower's channel, which no streaming process marks as listened.
  const spy = connectRedis(core.config);
  const heard: string[] = [];
  spy.on('message', (_c: string, m: string) => heard.push(m));
  try {
    await spy.subscribe(channelName(core.config, channel(away)));
    await live(client, author, { status: 'warming up' });
    expect(await core.redis.ttl(listenerKey(channel(reader)))).toBeGreaterThan(0);
    const id = await post(author, { status: 'for those who listen' });
    await client.waitFor((m) => m.event === 'update' && statusOf(m).id === id, 'update on the listened channel');
    // Both feeds took it; only the listened channel carried it.
    for (const u of [reader, away]) expect(await core.redis.zscore(feedKey('home', u.account._id), id)).not.toBeNull();
    expect(heard.filter((m) => m.includes(id))).toEqual([]);
  } finally {
    client.close();
    spy.disconnect();
  }
});

test('a user who only streams stays active: the sweep refreshes the activity marker', async () => {
  const reader = await createTestUser(core);
  await core.redis.del(activeKey(reader.account._id));
  forgetActivityRefreshes();
  const client = await open(`access_token=${reader.token}&stream=user`);
  try {
    await eventually(
      async () => (await core.redis.get(activeKey(reader.account._id))) !== null,
      10_000,
      'the marker is set again by the streaming sweep',
    );
  } finally {
    client.close();
  }
});

test('one socket multiplexes public:local and hashtag streams; unsubscribe stops them; unknown streams get an error', async () => {
  const viewer = await createTestUser(core);
  const poster = await createTestUser(core);
  const client = await open('', [viewer.token]);
  try {
    client.send({ type: 'subscribe', stream: 'public:local' });
    client.send({ type: 'subscribe', stream: 'hashtag', tag: 'StreamTest' });
    client.send({ type: 'subscribe', stream: 'nonsense' });
    await client.waitFor((m) => m.error === 'Unknown stream type', 'error for an unknown stream');
    await live(client, poster, { status: 'public warm-up' });
    const tagged = await post(poster, { status: 'about #streamtest' });
    await client.waitFor((m) => m.stream?.[0] === 'hashtag' && statusOf(m).id === tagged, 'hashtag update');
    await client.waitFor((m) => m.stream?.[0] === 'public:local' && statusOf(m).id === tagged, 'public:local update');
    client.send({ type: 'unsubscribe', stream: 'public:local' });
    client.send({ type: 'unsubscribe', stream: 'hashtag', tag: 'streamtest' });
    await eventually(
      async () => (await core.redis.pubsub('NUMSUB', `${core.config.redisNamespace}:timeline:public:local`)) !== null,
      2000,
      'x',
    );
    await new Promise((r) => setTimeout(r, 300)); // unsubscribe is a message: give it its round trip
    const before = client.messages.length;
    const quiet = await post(poster, { status: 'after unsubscribing #streamtest' });
    const probe = await open(`access_token=${viewer.token}&stream=public:local`);
    try {
      await live(probe, poster, { status: 'probe' });
      expect(client.messages.slice(before).some((m) => m.payload && statusOf(m).id === quiet)).toBe(false);
    } finally {
      probe.close();
    }
  } finally {
    client.close();
  }
});

test('an invalid token is refused at the upgrade; a revoked token closes the socket', async () => {
  await expect(open('access_token=not-a-token&stream=user')).rejects.toThrow('WebSocket refused');
  const user = await createTestUser(core);
  const client = await open(`access_token=${user.token}&stream=user`);
  await collection(core.db, accessTokens).updateOne({ userId: user.user._id }, { $set: { revokedAt: new Date() } });
  await eventually(async () => client.closed !== null, 15_000, 'socket closed after revocation');
});

test('a suspended account or a disabled login loses its sockets', async () => {
  const [suspended, disabled] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const a = await open(`access_token=${suspended.token}&stream=user`);
  const b = await open(`access_token=${disabled.token}&stream=user`);
  await collection(core.db, accounts).updateOne({ _id: suspended.account._id }, { $set: { suspendedAt: new Date() } });
  await collection(core.db, users).updateOne({ _id: disabled.user._id }, { $set: { disabled: true } });
  await eventually(async () => a.closed !== null && b.closed !== null, 15_000, 'sockets closed');
});

test('server-sent events: public/local and hashtag streams over HTTP, errors as JSON', async () => {
  const poster = await createTestUser(core);
  const base = `http://127.0.0.1:${streaming.port}/api/v1/streaming`;
  expect((await fetch(`${base}/health`)).status).toBe(200);
  expect((await fetch(`${base}/nonsense`)).status).toBe(404);
  expect((await fetch(`${base}/user`)).status).toBe(401);
  expect((await fetch(`${base}/user?access_token=wrong`)).status).toBe(401);

  const controller = new AbortController();
  const res = await fetch(`${base}/public/local`, { signal: controller.signal });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = res.body!.getReader();
  let received = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      received += new TextDecoder().decode(value);
    }
  })();
  try {
    await eventually(
      async () => {
        const id = await post(poster, { status: 'over SSE' });
        return eventually(async () => received.includes(`"id":"${id}"`), 3_000, 'sse probe').catch(() => undefined);
      },
      30_000,
      'an SSE update',
    );
    expect(received).toMatch(/event: update\ndata: \{/);
  } finally {
    controller.abort();
  }
});
