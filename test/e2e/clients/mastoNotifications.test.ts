// Notifications through a real client library (masto, as Elk and Phanpy use it; run in its own
// process by mastoNotificationsFlow.ts, masto being an ES module), with the notifications and
// webpush pipelines, the streaming server and a local Web Push service running: a follow, a
// favourite, a reblog, a mention and a poll's end each give the owner exactly one notification,
// seen in /api/v1/notifications, in the grouped /api/v2/notifications, once on the `user` and the
// `user:notification` streams, and as one Web Push message decrypted with the subscription's key.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import { runWebPushPipeline } from '../../../pipelines/webpush/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { channelName, timelineChannels } from '../../../services/core/streaming/channels.ts';
import { closeExpiredPolls } from '../../../services/core/polls/polls.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { channelSubscribers, eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { nodeBin, projectRoot } from '../../support/processes.ts';
import { PushReceiver } from '../../support/pushReceiver.ts';

let api: TestApi;
let core: Core;
let pipelines: Pipeline[] = [];
let streaming: StreamingServer;
let receiver: PushReceiver;

beforeAll(async () => {
  api = await startTestApi({ ALLOWED_PRIVATE_ADDRESSES: '127.0.0.0/8' });
  core = api.core;
  receiver = await PushReceiver.start();
  pipelines = await Promise.all([
    runNotificationsPipeline(core, consumerTuning),
    runWebPushPipeline(core, consumerTuning),
  ]);
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
});

afterAll(async () => {
  await streaming?.stop(1000);
  await Promise.all(pipelines.map((p) => p.stop()));
  await receiver?.close();
  await api?.close();
});

const TYPES = ['favourite', 'follow', 'mention', 'poll', 'reblog'];

interface Seen {
  phase: string;
  subscription: { serverKey: string; alerts: Record<string, boolean>; policy: string };
  postId: string;
  mentionId: string;
  pollStatusId: string;
  list: { id: string; type: string; account: string; status: string | null; pollExpired: boolean | null }[];
  frankPolls: string[];
  grouped: { groups: { type: string; count: number; sample: string[] }[]; accounts: string[]; statuses: string[] };
  onUser: string[];
  onNotification: string[];
}

test('follow, favourite, reblog, mention and poll end: one notification each, everywhere', async () => {
  const [alice, bob, carol, dave, erin, frank] = await Promise.all(
    Array.from({ length: 6 }, () => createTestUser(core)),
  );
  const push = receiver.subscription();
  const input = {
    url: api.server.url,
    streamingUrl: `ws://127.0.0.1:${streaming.port}`,
    push: { endpoint: push.endpoint, keys: push.keys },
    tokens: {
      alice: alice.token,
      bob: bob.token,
      carol: carol.token,
      dave: dave.token,
      erin: erin.token,
      frank: frank.token,
    },
    alice: { id: String(alice.account._id), username: alice.account.username },
  };
  const child = spawn(
    nodeBin,
    [join(projectRoot, 'test/e2e/clients/mastoNotificationsFlow.ts'), JSON.stringify(input)],
    {
      cwd: projectRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const phases: string[] = [];
  const waiters: { phase: string; resolve: () => void }[] = [];
  const onLine = (line: string) => {
    try {
      const phase = (JSON.parse(line) as { phase?: string }).phase;
      if (!phase) return;
      phases.push(phase);
      for (const w of waiters.filter((w) => w.phase === phase)) w.resolve();
    } catch {
      // not one of the script's lines
    }
  };
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
    pending += d.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    parts.forEach(onLine);
  });
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const phase = (name: string) =>
    Promise.race([
      new Promise<void>((resolve) => (phases.includes(name) ? resolve() : waiters.push({ phase: name, resolve }))),
      exited.then((code) => Promise.reject(new Error(`flow exited (${code}) before ${name}:\n${output}`))),
    ]);
  try {
    await phase('listening');
    // The streaming server subscribed alice's channels before anything happens.
    for (const name of [
      timelineChannels.user(alice.account._id),
      timelineChannels.userNotifications(alice.account._id),
    ])
      await eventually(
        async () => (await channelSubscribers(core.redis, channelName(core.config, name))) >= 1,
        20_000,
        `the streaming server listening on ${name}`,
      );
    child.stdin.write('go\n');
    await phase('voted');
    // The poll's time runs out: the scheduler's job, run here with the clock moved on.
    expect(await closeExpiredPolls(core, { now: new Date(Date.now() + 600_000) })).toBe(1);
    await phase('done');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const seen = JSON.parse(output.trim().split('\n').at(-1)!) as Seen;

  expect(seen.subscription.serverKey).toBe(core.vapid.publicKey);
  expect(seen.subscription.alerts).toMatchObject({
    follow: true,
    favourite: true,
    reblog: true,
    mention: true,
    poll: true,
  });
  expect(seen.subscription.policy).toBe('all');

  // v1: one of each, about the right accounts and statuses
  expect(seen.list.map((n) => n.type).sort()).toEqual(TYPES);
  const byType = Object.fromEntries(seen.list.map((n) => [n.type, n]));
  expect(byType.follow).toMatchObject({ account: String(bob.account._id), status: null });
  expect(byType.favourite).toMatchObject({ account: String(carol.account._id), status: seen.postId });
  expect(byType.reblog).toMatchObject({ account: String(dave.account._id), status: seen.postId });
  expect(byType.mention).toMatchObject({ account: String(erin.account._id), status: seen.mentionId });
  expect(byType.poll).toMatchObject({ status: seen.pollStatusId, pollExpired: true });
  expect(seen.frankPolls).toEqual([seen.pollStatusId]);

  // v2 grouped
  expect(seen.grouped.groups.map((g) => g.type).sort()).toEqual(TYPES);
  expect(seen.grouped.groups.every((g) => g.count === 1)).toBe(true);
  expect(seen.grouped.groups.find((g) => g.type === 'favourite')!.sample).toEqual([String(carol.account._id)]);
  expect(seen.grouped.accounts.sort()).toEqual(
    [alice, bob, carol, dave, erin].map((u) => String(u.account._id)).sort(),
  );
  expect(seen.grouped.statuses.sort()).toEqual([seen.postId, seen.mentionId, seen.pollStatusId].sort());

  // streaming: each notification once on each stream
  const ids = seen.list.map((n) => n.id).sort();
  expect(seen.onNotification.sort()).toEqual(ids);
  expect(seen.onUser.sort()).toEqual(ids);

  // Web Push: one decrypted message per notification
  await eventually(async () => receiver.received(push.path).length >= 5, 30_000, 'the Web Push messages');
  const pushes = receiver.received(push.path);
  expect(pushes.map((m) => m.error)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  expect(pushes.every((m) => m.vapidKey === core.vapid.publicKey)).toBe(true);
  expect(pushes.map((m) => m.payload!.notification_id as string).sort()).toEqual(ids);
  expect(pushes.map((m) => m.payload!.notification_type as string).sort()).toEqual(TYPES);
  expect(pushes.find((m) => m.payload!.notification_type === 'poll')!.payload!.title).toBe(
    `A poll by ${alice.account.username} has ended`,
  );
  expect(pushes.every((m) => m.payload!.access_token === alice.token)).toBe(true);
});
