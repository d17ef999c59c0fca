// notifyAndTell (services/core/notifications/tell.ts), which the notifications pipeline and the
// federation ingress (quotes, collections) both use: a new notification reaches its recipient's
// notification stream on the real Redis, a redelivered request creates and streams nothing.
import { Redis } from 'ioredis';
import type { Core } from '../../../services/core/context.ts';
import { notifyAndTell } from '../../../services/core/notifications/tell.ts';
import {
  channelName,
  LISTENER_TTL_SECONDS,
  listenerKey,
  timelineChannels,
} from '../../../services/core/streaming/channels.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let core: Core;
let subscriber: Redis | null = null;

beforeAll(async () => {
  ({ core } = await createTestCore());
});

afterAll(async () => {
  subscriber?.disconnect();
  if (core) await closeTestCore(core);
});

test('a notification made outside the pipeline is streamed to its recipient once', async () => {
  const [recipient, actor] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const channel = timelineChannels.userNotifications(recipient.account._id);
  const config = core.config;
  subscriber = new Redis(config.redisClusterNodes[0] ? `redis://${config.redisClusterNodes[0]}` : config.redisUrl);
  const heard: Array<{ event: string; payload: string }> = [];
  subscriber.on('message', (_channel: string, raw: string) => heard.push(JSON.parse(raw) as (typeof heard)[number]));
  await subscriber.subscribe(channelName(config, channel));
  // As a streaming server marks the channels it listens to.
  await core.redis.set(listenerKey(channel), '1', 'EX', LISTENER_TTL_SECONDS);

  const request = { type: 'follow' as const, accountId: recipient.account._id, fromAccountId: actor.account._id };
  const [doc] = await notifyAndTell(core, [request]);
  expect(doc).toBeDefined();
  await eventually(async () => heard.length > 0, 10_000, 'the notification on the stream');
  const payload = JSON.parse(heard[0]!.payload) as { id: string; type: string; account: { id: string } };
  expect({ event: heard[0]!.event, ...payload, account: payload.account.id }).toMatchObject({
    event: 'notification',
    id: String(doc!._id),
    type: 'follow',
    account: String(actor.account._id),
  });
  // The same request again (a redelivered activity): nothing new, nothing streamed; a follow by
  // someone else afterwards shows that the stream would have carried it by then.
  expect(await notifyAndTell(core, [request])).toEqual([]);
  const other = await createTestUser(core);
  await notifyAndTell(core, [{ ...request, fromAccountId: other.account._id }]);
  await eventually(async () => heard.length > 1, 10_000, 'the second notification on the stream');
  expect(heard.map((m) => (JSON.parse(m.payload) as { account: { id: string } }).account.id)).toEqual([
    String(actor.account._id),
    String(other.account._id),
  ]);
});
