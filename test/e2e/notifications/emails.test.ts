// Notification e-mails end to end: a post through the API, the notifications pipeline, the
// `MailRequested` events over Kafka, the mailer pipeline and a real SMTP server. Mastodon's rules:
// an e-mail for a notification type only to a user who chose it (mentions, follows on by default,
// favourites and boosts off), none for a notification the recipient's policy filtered, none while
// the recipient is connected to the streaming API unless they chose "always send"; none asked for
// at all by a server with no SMTP server configured.
import type { Redis } from 'ioredis';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { updateNotificationEmails } from '../../../services/core/users/notificationEmails.ts';
import { updatePolicy } from '../../../services/core/notifications/requests.ts';
import {
  channelName,
  LISTENER_TTL_SECONDS,
  listenerKey,
  timelineChannels,
} from '../../../services/core/streaming/channels.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { eventually } from '../../support/core.ts';
import { startMailingApi, type MailingApi } from '../../support/mailingApi.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import type { SmtpSink } from '../../support/smtpSink.ts';

jest.setTimeout(120_000);

let api: TestApi;
let core: Core;
let mailing: MailingApi;
let smtp: SmtpSink;
let author: TestUser, keen: TestUser, quiet: TestUser, wary: TestUser, online: TestUser, always: TestUser;
let listener: Redis;

/** The addresses the notifications pipeline asked the mailer to write to, with the template. */
const mailRequests = () =>
  api.published
    .filter((e) => e.type === 'MailRequested')
    .map((e) => ({ to: String(e.payload.to), template: String(e.payload.template) }));

beforeAll(async () => {
  mailing = await startMailingApi();
  ({ api, smtp } = mailing);
  core = api.core;
  [author, keen, quiet, wary, online, always] = await Promise.all(
    ['author', 'keen', 'quiet', 'wary', 'online', 'always'].map((username) => createTestUser(core, { username })),
  );
  await updateNotificationEmails(core, quiet.user._id, { mention: false });
  await updateNotificationEmails(core, always.user._id, {}, true);
  // wary filters notifications from people they don't follow: theirs are held back, not mailed.
  await updatePolicy(core, wary.account._id, { for_not_following: 'filter' });
  // `online` and `always` are connected to the streaming API (a subscriber on their channel).
  // On a Redis Cluster a subscriber shows only on its own node, so streaming servers also mark
  // the channels they listen to with keys (channels.ts): both, as a streaming server does.
  const channels = [timelineChannels.user(online.account._id), timelineChannels.userNotifications(always.account._id)];
  listener = core.redis.duplicate();
  await listener.subscribe(...channels.map((c) => channelName(core.config, c)));
  for (const c of channels) await core.redis.set(listenerKey(c), '1', 'EX', LISTENER_TTL_SECONDS);
});

afterAll(async () => {
  listener?.disconnect();
  await mailing?.close();
});

test('a mention is e-mailed in Mastodon’s words to whoever chose it, and to nobody else', async () => {
  const res = await api.call('POST', '/api/v1/statuses', author.token, {
    status: '@keen @quiet @wary @online @always lunch at noon?',
  });
  expect(res.status).toBe(200);
  const url = res.body.url as string;

  const mail = await smtp.waitFor(keen.user.email);
  expect(mail.subject).toBe('You were mentioned by author');
  expect(mail.text).toContain('You were mentioned by author in:');
  expect(mail.text).toContain('lunch at noon?');
  expect(mail.text).toContain(`Reply: ${url}`);
  expect(mail.text).toContain('/settings/preferences/notifications');
  // Connected, but chose "always send".
  const forAlways = await smtp.waitFor(always.user.email);
  expect(forAlways.subject).toBe('You were mentioned by author');

  // Every recipient was notified (wary's held back by the policy) ...
  const notified = await collection(core.db, notifications)
    .find({ type: 'mention' }, { projection: { accountId: 1, filtered: 1 } })
    .toArray();
  expect(notified.map((n) => [String(n.accountId), Boolean(n.filtered)]).sort()).toEqual(
    [
      [String(keen.account._id), false],
      [String(quiet.account._id), false],
      [String(wary.account._id), true],
      [String(online.account._id), false],
      [String(always.account._id), false],
    ].sort(),
  );
  // ... and the mails of one post are asked for together: exactly keen's and always's.
  expect(mailRequests().filter((m) => m.template === 'mention')).toEqual(
    expect.arrayContaining([
      { to: keen.user.email, template: 'mention' },
      { to: always.user.email, template: 'mention' },
    ]),
  );
  expect(mailRequests().filter((m) => m.template === 'mention')).toHaveLength(2);
  expect(smtp.mails.filter((m) => [quiet, wary, online].some((u) => m.to.includes(u.user.email)))).toEqual([]);
});

test('favourites are not e-mailed by default; once chosen, they are', async () => {
  await updateNotificationEmails(core, keen.user._id, { favourite: true });
  const quietPost = await api.call('POST', '/api/v1/statuses', quiet.token, { status: 'quiet post' });
  const keenPost = await api.call('POST', '/api/v1/statuses', keen.token, { status: 'keen post' });
  // One favouriter's events stay in order: quiet's favourite is handled before keen's.
  for (const post of [quietPost, keenPost])
    expect((await api.call('POST', `/api/v1/statuses/${post.body.id}/favourite`, author.token)).status).toBe(200);
  const mail = await smtp.waitFor(keen.user.email, 1);
  expect(mail.subject).toBe('author favorited your post');
  expect(mail.text).toContain('Your post was favorited by author:');
  expect(mail.text).toContain('keen post');
  expect(await collection(core.db, notifications).countDocuments({ type: 'favourite' })).toBe(2);
  expect(mailRequests().filter((m) => m.template === 'favourite')).toEqual([
    { to: keen.user.email, template: 'favourite' },
  ]);
});

test('a server without SMTP_SERVER asks for no notification e-mails (it could not send them)', async () => {
  const bare = await startTestApi({});
  const notifier = await runNotificationsPipeline(bare.core, consumerTuning);
  try {
    expect(bare.core.config.smtp.configured).toBe(false);
    const [writer, reader] = await Promise.all([createTestUser(bare.core), createTestUser(bare.core)]);
    const res = await bare.call('POST', '/api/v1/statuses', writer.token, {
      status: `@${reader.account.username} are you there?`,
    });
    expect(res.status).toBe(200);
    await eventually(
      async () =>
        (await collection(bare.core.db, notifications).countDocuments({
          type: 'mention',
          accountId: reader.account._id,
        })) === 1,
      60_000,
      'the mention notification',
    );
    expect(bare.published.filter((e) => e.type === 'MailRequested')).toEqual([]);
  } finally {
    await notifier.stop();
    await bare.close();
  }
});
