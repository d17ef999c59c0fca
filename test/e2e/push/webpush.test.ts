// Web Push end to end: the subscription API (scope push, one per token, validation), and delivery
// by the webpush pipeline to a real local push service that checks VAPID and decrypts each message
// with the subscription's private key: alerts and policy decide what is sent, 404/410 delete the
// subscription, 429/5xx are retried through the retry topic, revoking the token removes its
// subscription, and private addresses are refused unless ALLOWED_PRIVATE_ADDRESSES allows them.
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import { runWebPushPipeline } from '../../../pipelines/webpush/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { pushSubscriptions } from '../../../services/core/model/pushSubscriptions.ts';
import { revokeAccessToken } from '../../../services/core/oauth/tokens.ts';
import { sendWebPush } from '../../../services/core/push/deliver.ts';
import { issueAccessToken } from '../../../services/core/oauth/tokens.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { PushReceiver, type TestPushSubscription } from '../../support/pushReceiver.ts';

let api: TestApi;
let core: Core;
let pipelines: Pipeline[] = [];
let receiver: PushReceiver;
let alice: TestUser, bob: TestUser, carol: TestUser;
let hello: string;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

const ALL_ALERTS = { mention: true, favourite: true, follow: true, reblog: false, poll: true, status: true };

async function subscribe(user: TestUser, sub: TestPushSubscription, data: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/v1/push/subscription', user.token, {
    subscription: { endpoint: sub.endpoint, keys: sub.keys },
    data: { alerts: ALL_ALERTS, ...data },
  });
  expect(res.status).toBe(200);
  return res.body as { id: string; endpoint: string; alerts: Record<string, boolean>; policy: string };
}

beforeAll(async () => {
  api = await startTestApi({ ALLOWED_PRIVATE_ADDRESSES: '127.0.0.0/8' });
  core = api.core;
  receiver = await PushReceiver.start();
  pipelines = await Promise.all([
    runNotificationsPipeline(core, consumerTuning),
    runWebPushPipeline(core, { ...consumerTuning, retryDelaysMs: [300, 600] }),
  ]);
  [alice, bob, carol] = await Promise.all(Array.from({ length: 3 }, () => createTestUser(core)));
  hello = (await call('POST', '/api/v1/statuses', alice.token, { status: 'hello push' })).body.id;
});

afterAll(async () => {
  await Promise.all(pipelines.map((p) => p.stop()));
  await receiver?.close();
  await api?.close();
});

describe('the subscription API', () => {
  test('create, show, update, replace and delete; one per token', async () => {
    const user = await createTestUser(core);
    expect((await call('GET', '/api/v1/push/subscription', user.token)).status).toBe(404);
    const first = receiver.subscription();
    const created = await subscribe(user, first, { policy: 'follower' });
    expect(created).toEqual({
      id: expect.any(String),
      endpoint: first.endpoint,
      standard: false,
      alerts: expect.objectContaining({ mention: true, reblog: false, update: false, 'admin.sign_up': false }),
      policy: 'follower',
      server_key: core.vapid.publicKey,
    });
    expect((await call('GET', '/api/v1/push/subscription', user.token)).body).toEqual(created);

    const updated = await call('PUT', '/api/v1/push/subscription', user.token, {
      data: { alerts: { update: 'true', mention: 'false' }, policy: 'none' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.policy).toBe('none');
    expect(updated.body.alerts).toMatchObject({ update: true, mention: false, favourite: false });

    // a second POST with the same token replaces the first
    const second = receiver.subscription();
    const replaced = await subscribe(user, second);
    expect(replaced.id).not.toBe(created.id);
    expect(await collection(core.db, pushSubscriptions).countDocuments({ accountId: user.account._id })).toBe(1);

    // another token of the same user has its own
    const other = await issueAccessToken(core, {
      appId: user.app._id,
      userId: user.user._id,
      scopes: ['push'],
      reuse: false,
    });
    expect((await call('GET', '/api/v1/push/subscription', other.token)).status).toBe(404);

    expect((await call('DELETE', '/api/v1/push/subscription', user.token)).body).toEqual({});
    expect((await call('GET', '/api/v1/push/subscription', user.token)).status).toBe(404);
    expect((await call('PUT', '/api/v1/push/subscription', user.token, { data: { policy: 'all' } })).status).toBe(404);
  });

  test('the endpoint is stored and returned exactly as sent (no slash added, case kept)', async () => {
    const user = await createTestUser(core);
    const { keys } = receiver.subscription();
    for (const endpoint of ['https://Push.Example.COM', 'https://push.example.com:443/a/../b?x=1&y=%7e#frag']) {
      const res = await call('POST', '/api/v1/push/subscription', user.token, {
        subscription: { endpoint, keys },
        data: { alerts: ALL_ALERTS },
      });
      expect(res.status).toBe(200);
      expect(res.body.endpoint).toBe(endpoint);
      expect((await call('GET', '/api/v1/push/subscription', user.token)).body.endpoint).toBe(endpoint);
      const stored = await collection(core.db, pushSubscriptions).findOne({ accountId: user.account._id });
      expect(stored?.endpoint).toBe(endpoint);
    }
  });

  test('bad input is a 4xx, the push scope is required', async () => {
    const user = await createTestUser(core);
    const good = receiver.subscription();
    const post = (subscription: unknown, data: unknown = {}) =>
      call('POST', '/api/v1/push/subscription', user.token, { subscription, data });
    for (const endpoint of [
      'not a url',
      'ftp://example.com/x',
      'https://user:pw@example.com/',
      '',
      'http://10.1.2.3/x',
    ]) {
      const res = await post({ endpoint, keys: good.keys });
      expect([res.status, endpoint]).toEqual([422, endpoint]);
      expect(res.body.error).toEqual(expect.any(String));
    }
    const badKey = Buffer.alloc(65, 7);
    badKey[0] = 4;
    for (const keys of [
      { p256dh: 'short', auth: good.keys.auth },
      { p256dh: badKey.toString('base64url'), auth: good.keys.auth },
      { p256dh: good.keys.p256dh, auth: Buffer.alloc(8).toString('base64url') },
      { p256dh: good.keys.p256dh },
      {},
    ])
      expect((await post({ endpoint: good.endpoint, keys })).status).toBe(422);
    expect((await post({ endpoint: good.endpoint, keys: good.keys }, { policy: 'friends' })).status).toBe(422);
    expect((await call('POST', '/api/v1/push/subscription', user.token, {})).status).toBe(400);
    expect((await call('GET', '/api/v1/push/subscription')).status).toBe(401);
    const readOnly = await issueAccessToken(core, {
      appId: user.app._id,
      userId: user.user._id,
      scopes: ['read', 'write'],
      reuse: false,
    });
    expect((await call('GET', '/api/v1/push/subscription', readOnly.token)).status).toBe(403);
    expect((await post({ endpoint: good.endpoint, keys: good.keys })).status).toBe(200);
  });
});

describe('delivery', () => {
  test('a favourite arrives encrypted, VAPID-signed, with Mastodon’s payload; disabled alerts are not sent', async () => {
    const sub = receiver.subscription();
    await subscribe(alice, sub);
    expect((await call('POST', `/api/v1/statuses/${hello}/favourite`, bob.token)).status).toBe(200);
    await eventually(async () => receiver.received(sub.path).length >= 1, 30_000, 'the favourite push');
    const [msg] = receiver.received(sub.path);
    expect(msg!.error).toBeUndefined();
    expect(msg!.vapidKey).toBe(core.vapid.publicKey);
    expect(msg!.headers.ttl).toBe(String(48 * 3600));
    const list = (await call('GET', '/api/v1/notifications', alice.token)).body as { id: string; type: string }[];
    const fav = list.find((n) => n.type === 'favourite')!;
    expect(msg!.payload).toEqual({
      access_token: alice.token,
      preferred_locale: 'en',
      notification_id: fav.id,
      notification_type: 'favourite',
      icon: expect.stringMatching(/^http/),
      title: `${bob.account.username} favorited your post`,
      body: 'hello push',
    });

    // reblog alerts are off: the reblog is not pushed, the follow after it is (same partition, in order)
    expect((await call('POST', `/api/v1/statuses/${hello}/reblog`, bob.token)).status).toBe(200);
    expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token)).status).toBe(200);
    await eventually(async () => receiver.received(sub.path).length >= 2, 30_000, 'the follow push');
    expect(receiver.received(sub.path).map((m) => m.payload?.notification_type)).toEqual(['favourite', 'follow']);
    expect(receiver.received(sub.path)[1]!.payload!.title).toBe(`${bob.account.username} is now following you`);
  });

  test('policy followed: only accounts the recipient follows', async () => {
    const dave = await createTestUser(core);
    const sub = receiver.subscription();
    await subscribe(dave, sub, { policy: 'followed' });
    expect((await call('POST', `/api/v1/accounts/${bob.account._id}/follow`, dave.token)).status).toBe(200);
    await call('POST', '/api/v1/statuses', carol.token, { status: `@${dave.account.username} from a stranger` });
    await call('POST', '/api/v1/statuses', bob.token, { status: `@${dave.account.username} from a friend` });
    await eventually(async () => receiver.received(sub.path).length >= 1, 30_000, 'the mention push');
    await eventually(
      async () =>
        ((await call('GET', '/api/v1/notifications?types[]=mention', dave.token)).body as unknown[]).length === 2,
      30_000,
      'both mentions notified',
    );
    expect(receiver.received(sub.path).map((m) => m.payload?.body)).toEqual([
      `@${dave.account.username} from a friend`,
    ]);
    expect(receiver.received(sub.path)[0]!.payload!.title).toBe(`You were mentioned by ${bob.account.username}`);
  });

  test('429 and 5xx are retried with backoff until delivered; 410 deletes the subscription', async () => {
    const erin = await createTestUser(core);
    const sub = receiver.subscription();
    await subscribe(erin, sub);
    receiver.respondWith(sub.path, 429, 503);
    await call('POST', `/api/v1/accounts/${erin.account._id}/follow`, bob.token);
    await eventually(async () => receiver.received(sub.path).length >= 3, 30_000, 'two retries');
    const tries = receiver.received(sub.path);
    expect(tries.map((m) => m.status)).toEqual([429, 503, 201]);
    expect(new Set(tries.map((m) => m.payload?.notification_id)).size).toBe(1);

    receiver.respondWith(sub.path, 410);
    await call('POST', `/api/v1/accounts/${erin.account._id}/follow`, carol.token);
    await eventually(
      async () => (await call('GET', '/api/v1/push/subscription', erin.token)).status === 404,
      30_000,
      'the gone subscription deleted',
    );
    expect(receiver.received(sub.path)).toHaveLength(4);
  });

  test('revoking the token deletes its subscription', async () => {
    const frank = await createTestUser(core);
    await subscribe(frank, receiver.subscription());
    expect(await collection(core.db, pushSubscriptions).countDocuments({ accountId: frank.account._id })).toBe(1);
    expect(await revokeAccessToken(core, frank.app._id, frank.token)).toBe(true);
    expect(await collection(core.db, pushSubscriptions).countDocuments({ accountId: frank.account._id })).toBe(0);
  });

  test('a loopback endpoint is refused unless ALLOWED_PRIVATE_ADDRESSES allows it', async () => {
    const sub = receiver.subscription();
    const target = { endpoint: sub.endpoint, keyP256dh: sub.keys.p256dh, keyAuth: sub.keys.auth };
    const strict = {
      ...core,
      config: { ...core.config, federation: { ...core.config.federation, allowedPrivateAddresses: [] } },
    } as Core;
    expect(await sendWebPush(strict, target, '{}')).toBe('refused');
    const viaName = { ...target, endpoint: sub.endpoint.replace('127.0.0.1', 'localhost') };
    expect(await sendWebPush(strict, viaName, '{}')).toBe('refused');
    expect(receiver.received(sub.path)).toHaveLength(0);
    expect(await sendWebPush(core, target, '{"ok":true}')).toBe('delivered');
    expect(receiver.received(sub.path).map((m) => m.payload)).toEqual([{ ok: true }]);
  });
});
