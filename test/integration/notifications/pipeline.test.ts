// The notifications pipeline on the real servers: actions through the API publish the real events,
// the pipeline consumes them from Kafka and writes notification documents. One per (type, from,
// recipient, status): republishing the very same events changes nothing. Hard mutes, blocks and
// muted conversations suppress; soft mutes do not; nobody is notified about their own actions.
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications, type NotificationDoc } from '../../../services/core/model/notifications.ts';
import { closeExpiredPolls } from '../../../services/core/polls/polls.ts';
import { createKafkaEventSink } from '../../../services/core/events/kafkaSink.ts';
import { connectRedis } from '../../../services/core/db/redis.ts';
import {
  channelName,
  LISTENER_TTL_SECONDS,
  listenerKey,
  timelineChannels,
} from '../../../services/core/streaming/channels.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
});

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

async function post(user: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  return res.body.id;
}

async function notificationsOf(user: TestUser): Promise<NotificationDoc[]> {
  return collection(core.db, notifications).find({ accountId: user.account._id }).sort({ _id: 1 }).toArray();
}

const summary = (docs: NotificationDoc[]) => docs.map((n) => `${n.type}:${n.fromAccountId}:${n.statusId ?? ''}`).sort();

test('events in, notifications out: each kind once, none suppressed wrongly, none on redelivery', async () => {
  const [alice, bob, carol, hardMuter, softMuter, blocker, convMuter] = await Promise.all(
    Array.from({ length: 7 }, () => createTestUser(core)),
  );
  const a = alice!.account._id;
  const b = bob!.account._id;

  // A subscriber to streaming notifications of alice, announced as a streaming process announces
  // its channels (on a Redis Cluster the pipeline asks the listener keys, not PUBSUB NUMSUB).
  const sub = connectRedis(core.config);
  const streamed: string[] = [];
  await sub.subscribe(channelName(core.config, timelineChannels.userNotifications(a)));
  await core.redis.set(listenerKey(timelineChannels.userNotifications(a)), '1', 'EX', LISTENER_TTL_SECONDS);
  sub.on('message', (_c, m) => streamed.push(m));

  try {
    // follow (with notify), then block / mute set-ups
    expect((await call('POST', `/api/v1/accounts/${a}/follow`, bob!.token, { notify: true })).status).toBe(200);
    await call('POST', `/api/v1/accounts/${b}/mute`, hardMuter!.token, { notifications: true });
    await call('POST', `/api/v1/accounts/${b}/mute`, softMuter!.token, { notifications: false });
    await call('POST', `/api/v1/accounts/${b}/block`, blocker!.token);

    // alice posts: bob gets `status`; bob mentions everyone
    const hello = await post(alice!, { status: 'hello world' });
    const mention = await post(bob!, {
      status: `@${alice!.account.username} @${hardMuter!.account.username} @${softMuter!.account.username} @${blocker!.account.username} @${bob!.account.username} hi`,
    });
    // favourite + reblog of alice's post by bob and carol; alice favourites her own post
    for (const u of [bob!, carol!]) {
      expect((await call('POST', `/api/v1/statuses/${hello}/favourite`, u.token)).status).toBe(200);
      expect((await call('POST', `/api/v1/statuses/${hello}/reblog`, u.token)).status).toBe(200);
    }
    await call('POST', `/api/v1/statuses/${hello}/favourite`, alice!.token);
    // a muted conversation: convMuter mutes their own thread, then bob favourites and replies in it
    const thread = await post(convMuter!, { status: 'my thread' });
    expect((await call('POST', `/api/v1/statuses/${thread}/mute`, convMuter!.token)).status).toBe(200);
    await call('POST', `/api/v1/statuses/${thread}/favourite`, bob!.token);
    // an edit of alice's post: bob and carol reblogged it
    expect(
      (await call('PUT', `/api/v1/statuses/${hello}`, alice!.token, { status: 'hello world, edited' })).status,
    ).toBe(200);
    // a poll by alice that carol votes in, closed by the scheduler's job
    const pollStatus = (
      await call('POST', '/api/v1/statuses', alice!.token, {
        status: 'vote',
        poll: { options: ['yes', 'no'], expires_in: 300 },
      })
    ).body;
    expect(
      (await call('POST', `/api/v1/polls/${pollStatus.poll.id}/votes`, carol!.token, { choices: [0] })).status,
    ).toBe(200);
    expect(await closeExpiredPolls(core, { now: new Date(Date.now() + 600_000) })).toBe(1);
    // marker: last event, to alice
    const last = await post(carol!, { status: `@${alice!.account.username} last` });

    await eventually(
      async () => (await notificationsOf(alice!)).some((n) => n.statusId === BigInt(last)),
      30_000,
      'mention marker',
    );
    await eventually(async () => (await notificationsOf(carol!)).some((n) => n.type === 'poll'), 30_000, 'poll');

    const c = carol!.account._id;
    const expectedAlice = [
      `follow:${b}:`,
      `mention:${b}:${mention}`,
      `favourite:${b}:${hello}`,
      `favourite:${c}:${hello}`,
      `reblog:${b}:${hello}`,
      `reblog:${c}:${hello}`,
      `poll:${a}:${pollStatus.id}`,
      `mention:${c}:${last}`,
    ].sort();
    expect(summary(await notificationsOf(alice!))).toEqual(expectedAlice);
    expect(summary(await notificationsOf(bob!))).toEqual(
      [`status:${a}:${hello}`, `status:${a}:${pollStatus.id}`, `update:${a}:${hello}`].sort(),
    );
    expect(summary(await notificationsOf(carol!))).toEqual(
      [`update:${a}:${hello}`, `poll:${a}:${pollStatus.id}`].sort(),
    );
    expect(await notificationsOf(hardMuter!)).toEqual([]);
    expect(await notificationsOf(blocker!)).toEqual([]);
    expect(summary(await notificationsOf(softMuter!))).toEqual([`mention:${b}:${mention}`]);
    expect(await notificationsOf(convMuter!)).toEqual([]);

    // favourites and reblogs of one status share a group key per type; others are ungrouped
    const aliceDocs = await notificationsOf(alice!);
    const favs = aliceDocs.filter((n) => n.type === 'favourite');
    expect(favs[0]!.groupKey).toBe(favs[1]!.groupKey);
    expect(favs[0]!.groupKey).toMatch(new RegExp(`^favourite-${hello}-\\d+$`));
    const m = aliceDocs.find((n) => n.type === 'mention')!;
    expect(m.groupKey).toBe(`ungrouped-${m._id}`);

    // streamed to alice's notification stream, one message per notification
    await eventually(async () => streamed.length >= expectedAlice.length, 10_000, 'streamed notifications');
    const msgs = streamed.map((s) => JSON.parse(s) as { event: string; payload: string });
    expect(msgs.every((x) => x.event === 'notification')).toBe(true);
    const payloads = msgs.map((x) => JSON.parse(x.payload) as { id: string; type: string; account: { id: string } });
    expect(payloads.map((p) => p.id).sort()).toEqual(aliceDocs.map((n) => String(n._id)).sort());

    // Redelivery: the very same events (same eventIds) published again change nothing.
    const before = await collection(core.db, notifications).countDocuments({});
    const sink = await createKafkaEventSink(core.config, core.logger);
    try {
      await sink.publish(api.published.filter((e) => e.type !== 'ProbeSent'));
    } finally {
      await sink.close();
    }
    const marker2 = await post(carol!, { status: `@${alice!.account.username} after redelivery` });
    await eventually(
      async () => (await notificationsOf(alice!)).some((n) => n.statusId === BigInt(marker2)),
      30_000,
      'second marker',
    );
    await eventually(async () => (await pipeline.lag()) === 0, 30_000, 'pipeline caught up');
    expect(await collection(core.db, notifications).countDocuments({})).toBe(before + 1);
  } finally {
    sub.disconnect();
  }
});
