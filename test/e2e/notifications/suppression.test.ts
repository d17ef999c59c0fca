// The matrix of Mastodon's notification rules, each row a relationship between recipient and
// sender, each column a notification type: created (shown), filtered (held in a notification
// request by the recipient's policy) or none (suppressed or dropped). Relationships are made
// through the API; notifications through the notifications pipeline's own domain function (the
// pipeline itself is covered by notifications.test.ts), on the real MongoDB-wire server.
import type { Core } from '../../../services/core/context.ts';
import type { Id } from '../../../services/core/ids.ts';
import { nextSerialId } from '../../../services/core/ids.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { mutes } from '../../../services/core/model/mutes.ts';
import { notificationPermissions } from '../../../services/core/model/notificationPolicies.ts';
import type { NotificationType } from '../../../services/core/model/notifications.ts';
import { createNotification } from '../../../services/core/notifications/notify.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';

let api: TestApi;
let core: Core;
const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
});
afterAll(async () => {
  await api?.close();
});

type Kind = 'mention' | 'dm' | 'favourite' | 'reblog' | 'follow' | 'poll' | 'update';
type Outcome = 'created' | 'filtered' | 'none';
const KINDS: Kind[] = ['mention', 'dm', 'favourite', 'reblog', 'follow', 'poll', 'update'];
const FILTERABLE: Kind[] = ['mention', 'dm', 'favourite', 'reblog', 'follow'];

interface Pair {
  recipient: TestUser;
  sender: TestUser;
  /** The recipient's root status; the sender's statuses reply to it (one thread)... */
  root: string;
  /** ...unless the sender cannot see it (blocked). */
  thread: boolean;
}

const DAY = 24 * 3600_000;

async function post(u: TestUser, body: Record<string, unknown>): Promise<Id> {
  const res = await call('POST', '/api/v1/statuses', u.token, body);
  expect(res.status).toBe(200);
  return BigInt(res.body.id as string);
}

const follow = (from: TestUser, to: TestUser) => call('POST', `/api/v1/accounts/${to.account._id}/follow`, from.token);
const policy = (u: TestUser, p: Record<string, string>) => call('PATCH', '/api/v2/notifications/policy', u.token, p);
const age = (u: TestUser, days: number) =>
  collection(core.db, accounts).updateOne(
    { _id: u.account._id },
    { $set: { createdAt: new Date(Date.now() - days * DAY) } },
  );

/** Runs one kind of notification from `sender` to `recipient` and says what became of it. */
async function outcome(p: Pair, kind: Kind): Promise<Outcome> {
  const { recipient, sender } = p;
  const mention = `@${recipient.account.username}`;
  const base = { accountId: recipient.account._id, fromAccountId: sender.account._id };
  let req: { type: NotificationType; statusId: Id | null; variant?: string };
  switch (kind) {
    case 'mention':
      req = {
        type: 'mention',
        statusId: await post(sender, { status: `${mention} hi`, in_reply_to_id: p.thread ? p.root : undefined }),
      };
      break;
    case 'dm':
      req = {
        type: 'mention',
        statusId: await post(sender, {
          status: `${mention} psst`,
          visibility: 'direct',
          in_reply_to_id: p.thread ? p.root : undefined,
        }),
      };
      break;
    case 'favourite':
    case 'reblog':
      req = { type: kind, statusId: BigInt(p.root) };
      break;
    case 'follow':
      req = { type: 'follow', statusId: null };
      break;
    case 'poll':
    case 'update':
      req = {
        type: kind,
        statusId: await post(sender, { status: 'a reply', in_reply_to_id: p.thread ? p.root : undefined }),
        variant: String(Date.now()),
      };
      break;
  }
  const doc = await createNotification(core, { ...base, ...req });
  if (!doc) return 'none';
  return doc.filtered ? 'filtered' : 'created';
}

async function pair(opts: { senderAgeDays?: number; recipientAgeDays?: number } = {}): Promise<Pair> {
  const [recipient, sender] = await Promise.all([createTestUser(core), createTestUser(core)]);
  // Old accounts by default, so only rows about new accounts meet that condition.
  await age(sender, opts.senderAgeDays ?? 365);
  await age(recipient, opts.recipientAgeDays ?? 365);
  const root = (await call('POST', '/api/v1/statuses', recipient.token, { status: 'root' })).body.id as string;
  return { recipient, sender, root, thread: true };
}

function expected(row: Partial<Record<Kind, Outcome>> & { rest: Outcome }): Record<Kind, Outcome> {
  return Object.fromEntries(KINDS.map((k) => [k, row[k] ?? row.rest])) as Record<Kind, Outcome>;
}

/** Filterable kinds get `filterable`, the others (poll, update) `other`. */
function byFilterable(filterable: Outcome, other: Outcome = 'created'): Record<Kind, Outcome> {
  return Object.fromEntries(KINDS.map((k) => [k, FILTERABLE.includes(k) ? filterable : other])) as Record<
    Kind,
    Outcome
  >;
}

const ROWS: [string, (p: Pair) => Promise<unknown>, Record<Kind, Outcome>, { senderAgeDays?: number }?][] = [
  ['no relationship (default policy)', async () => undefined, expected({ dm: 'filtered', rest: 'created' })],
  ['the recipient follows the sender', (p) => follow(p.recipient, p.sender), expected({ rest: 'created' })],
  [
    'the recipient blocks the sender',
    (p) => {
      p.thread = false;
      return call('POST', `/api/v1/accounts/${p.sender.account._id}/block`, p.recipient.token);
    },
    expected({ rest: 'none' }),
  ],
  [
    'the sender blocks the recipient',
    (p) => call('POST', `/api/v1/accounts/${p.recipient.account._id}/block`, p.sender.token),
    expected({ rest: 'none' }),
  ],
  [
    'hard mute (notifications muted too)',
    (p) => call('POST', `/api/v1/accounts/${p.sender.account._id}/mute`, p.recipient.token, { notifications: true }),
    expected({ rest: 'none' }),
  ],
  [
    'soft mute (notifications kept)',
    (p) => call('POST', `/api/v1/accounts/${p.sender.account._id}/mute`, p.recipient.token, { notifications: false }),
    expected({ dm: 'filtered', rest: 'created' }),
  ],
  [
    'an expired hard mute',
    async (p) => {
      await call('POST', `/api/v1/accounts/${p.sender.account._id}/mute`, p.recipient.token, {
        notifications: true,
        duration: 3600,
      });
      await collection(core.db, mutes).updateMany(
        { accountId: p.recipient.account._id },
        { $set: { expiresAt: new Date(Date.now() - 1000) } },
      );
    },
    expected({ dm: 'filtered', rest: 'created' }),
  ],
  [
    'the recipient muted the conversation',
    (p) => call('POST', `/api/v1/statuses/${p.root}/mute`, p.recipient.token),
    expected({ follow: 'created', rest: 'none' }),
  ],
  [
    'policy for_not_following: filter',
    (p) => policy(p.recipient, { for_not_following: 'filter' }),
    byFilterable('filtered'),
  ],
  ['policy for_not_following: drop', (p) => policy(p.recipient, { for_not_following: 'drop' }), byFilterable('none')],
  [
    'for_not_following: filter, but the recipient follows the sender',
    async (p) => {
      await policy(p.recipient, { for_not_following: 'filter' });
      await follow(p.recipient, p.sender);
    },
    expected({ rest: 'created' }),
  ],
  [
    'for_not_following: filter, but the sender’s request was accepted before',
    async (p) => {
      await policy(p.recipient, { for_not_following: 'filter', for_private_mentions: 'accept' });
      await collection(core.db, notificationPermissions).insertOne({
        _id: await nextSerialId(core.db, 'notification_permissions'),
        accountId: p.recipient.account._id,
        fromAccountId: p.sender.account._id,
        createdAt: new Date(),
      });
    },
    expected({ rest: 'created' }),
  ],
  [
    'for_not_followers: filter, the sender follows since today',
    async (p) => {
      await policy(p.recipient, { for_not_followers: 'filter', for_private_mentions: 'accept' });
      await follow(p.sender, p.recipient);
    },
    byFilterable('filtered'),
  ],
  [
    'for_not_followers: filter, the sender follows since 4 days',
    async (p) => {
      await policy(p.recipient, { for_not_followers: 'filter', for_private_mentions: 'accept' });
      await follow(p.sender, p.recipient);
      await collection(core.db, follows).updateMany(
        { accountId: p.sender.account._id },
        { $set: { createdAt: new Date(Date.now() - 4 * DAY) } },
      );
    },
    expected({ rest: 'created' }),
  ],
  [
    'for_new_accounts: filter, the sender is 2 days old',
    (p) => policy(p.recipient, { for_new_accounts: 'filter', for_private_mentions: 'accept' }),
    byFilterable('filtered'),
    { senderAgeDays: 2 },
  ],
  [
    'for_new_accounts: filter, the sender is 60 days old',
    (p) => policy(p.recipient, { for_new_accounts: 'filter', for_private_mentions: 'accept' }),
    expected({ rest: 'created' }),
    { senderAgeDays: 60 },
  ],
  [
    'for_private_mentions: accept',
    (p) => policy(p.recipient, { for_private_mentions: 'accept' }),
    expected({ rest: 'created' }),
  ],
  [
    'for_private_mentions: drop',
    (p) => policy(p.recipient, { for_private_mentions: 'drop' }),
    expected({ dm: 'none', rest: 'created' }),
  ],
  [
    'a limited (silenced) sender the recipient does not follow',
    (p) => collection(core.db, accounts).updateOne({ _id: p.sender.account._id }, { $set: { silencedAt: new Date() } }),
    expected({
      mention: 'filtered',
      dm: 'filtered',
      favourite: 'filtered',
      reblog: 'filtered',
      follow: 'filtered',
      rest: 'created',
    }),
  ],
  [
    'a limited sender the recipient follows',
    async (p) => {
      await collection(core.db, accounts).updateOne(
        { _id: p.sender.account._id },
        { $set: { silencedAt: new Date() } },
      );
      await follow(p.recipient, p.sender);
    },
    expected({ rest: 'created' }),
  ],
  [
    'for_limited_accounts: drop',
    async (p) => {
      await policy(p.recipient, { for_limited_accounts: 'drop' });
      await collection(core.db, accounts).updateOne(
        { _id: p.sender.account._id },
        { $set: { silencedAt: new Date() } },
      );
    },
    byFilterable('none'),
  ],
];

// A rest parameter: jest would take a fourth declared parameter for a `done` callback.
test.each(ROWS)('%s', async (...row) => {
  const [, setup, want, opts] = row;
  const p = await pair(opts ?? {});
  await setup(p);
  const got: Record<string, Outcome> = {};
  for (const kind of KINDS) got[kind] = await outcome(p, kind);
  expect(got).toEqual(want);
});

test('notifications to oneself: only a poll', async () => {
  const p = await pair();
  const self = { ...p, sender: p.recipient };
  const got: Record<string, Outcome> = {};
  for (const kind of ['favourite', 'follow', 'poll', 'update'] as Kind[]) got[kind] = await outcome(self, kind);
  expect(got).toEqual({ favourite: 'none', follow: 'none', poll: 'created', update: 'none' });
});

test('a blocked domain: nothing from its accounts', async () => {
  const p = await pair();
  const remoteId = await nextSerialId(core.db, 'accounts');
  const remote = {
    ...p.sender.account,
    _id: remoteId,
    username: `far${remoteId}`,
    usernameLower: `far${remoteId}`,
    domain: 'blocked.example',
    uri: `https://blocked.example/users/far${remoteId}`,
    privateKeyPem: null,
  };
  await collection(core.db, accounts).insertOne(remote);
  const sender = { ...p.sender, account: remote };
  const from = { ...p, sender };
  expect(await outcome(from, 'favourite')).toBe('created');
  expect((await call('POST', '/api/v1/domain_blocks', p.recipient.token, { domain: 'blocked.example' })).status).toBe(
    200,
  );
  expect(await outcome(from, 'follow')).toBe('none');
  expect(await outcome(from, 'reblog')).toBe('none');
});

test('a private mention answering the recipient’s own private mention is not filtered', async () => {
  const p = await pair();
  const ask = await post(p.recipient, { status: `@${p.sender.account.username} question`, visibility: 'direct' });
  const answer = await post(p.sender, {
    status: `@${p.recipient.account.username} answer`,
    visibility: 'direct',
    in_reply_to_id: String(ask),
  });
  const doc = await createNotification(core, {
    type: 'mention',
    accountId: p.recipient.account._id,
    fromAccountId: p.sender.account._id,
    statusId: answer,
  });
  expect(doc?.filtered).toBeUndefined();
  // the same sender starting a new thread is filtered
  const fresh = await post(p.sender, { status: `@${p.recipient.account.username} new topic`, visibility: 'direct' });
  const filtered = await createNotification(core, {
    type: 'mention',
    accountId: p.recipient.account._id,
    fromAccountId: p.sender.account._id,
    statusId: fresh,
  });
  expect(filtered?.filtered).toBe(true);
});
