// Group summaries (notification_groups) stay exact, and /api/v2/notifications read from them pages
// the way Mastodon does:
// - through the notifications pipeline: a redelivered event (the same Kafka record again) and an
//   unfavourite followed by a re-favourite count once (the re-favourite is a new notification); a dismissed notification leaves its group;
//   a notification stored but never added to its group (a writer that died) is repaired by the
//   event's redelivery;
// - against a brute-force model of Mastodon's grouped pagination (NotificationGroup and
//   paginate_groups: representatives, counts and samples up to the page's upper bound,
//   page_min_id) over an interleaved data set, for every cursor and several filters.
import { randomUUID } from 'node:crypto';
import type { Core } from '../../../services/core/context.ts';
import type { Id } from '../../../services/core/ids.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { createKafkaEventSink, type KafkaEventSink } from '../../../services/core/events/kafkaSink.ts';
import {
  notificationGroups,
  notifications,
  type NotificationDoc,
  type NotificationType,
} from '../../../services/core/model/notifications.ts';
import { createNotifications, type NotificationRequest } from '../../../services/core/notifications/notify.ts';
import { groupPage } from '../../../services/core/notifications/groupPages.ts';
import {
  deleteNotificationsFrom,
  rebuildAllGroups,
  rebuildGroup,
  removeFromGroup,
} from '../../../services/core/notifications/groups.ts';
import { GROUPABLE_TYPES } from '../../../services/core/model/notifications.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let sink: KafkaEventSink;
let users: TestUser[];

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  sink = await createKafkaEventSink(core.config, core.logger);
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  users = await Promise.all(Array.from({ length: 12 }, () => createTestUser(core)));
});

afterAll(async () => {
  await pipeline?.stop();
  await sink?.close();
  await api?.close();
});

/** Every summary of `accountId` equals what its notifications say, and no group lacks one. */
async function expectSummariesExact(accountId: Id): Promise<void> {
  const all = await collection(core.db, notifications)
    .find({ accountId, filtered: { $ne: true } })
    .sort({ _id: -1 })
    .toArray();
  const expected = new Map<string, { count: number; firstId: Id; lastId: Id; samples: Id[] }>();
  for (const n of all) {
    const e = expected.get(n.groupKey);
    if (!e) expected.set(n.groupKey, { count: 1, firstId: n._id, lastId: n._id, samples: [n.fromAccountId] });
    else {
      e.count++;
      e.firstId = n._id;
      if (e.samples.length < 8) e.samples.push(n.fromAccountId);
    }
  }
  const summaries = await collection(core.db, notificationGroups).find({ accountId }).toArray();
  expect(
    Object.fromEntries(
      summaries.map((s) => [
        s.groupKey,
        { count: s.count, firstId: s.firstId, lastId: s.lastId, samples: s.samples.map((x) => x.from) },
      ]),
    ),
  ).toEqual(Object.fromEntries(expected));
}

const statusOf = async (u: TestUser, text: string) =>
  (await call('POST', '/api/v1/statuses', u.token, { status: text })).body.id as string;

const groupsOf = async (u: TestUser, qs = '') =>
  (await call('GET', `/api/v2/notifications${qs}`, u.token)).body.notification_groups as {
    group_key: string;
    type: string;
    notifications_count: number;
    sample_account_ids: string[];
    most_recent_notification_id: string;
  }[];

describe('through the notifications pipeline', () => {
  test('a redelivered event and an unfavourite then re-favourite count once', async () => {
    const [owner, a, b, c] = users;
    const id = await statusOf(owner, 'favourite me');
    for (const u of [a, b]) expect((await call('POST', `/api/v1/statuses/${id}/favourite`, u.token)).status).toBe(200);
    await eventually(async () => (await groupsOf(owner))[0]?.notifications_count === 2, 30_000, 'two favourites');

    // The same Kafka record again, as after a rebalance before the commit.
    const original = api.published.find(
      (e) => e.type === 'FavouriteCreated' && e.payload.accountId === String(a.account._id),
    );
    expect(original).toBeDefined();
    await sink.publish([original!]);
    // Unfavourite and favourite again: the old notification goes with its favourite, the new
    // favourite is a new notification (Mastodon's notification belongs to its activity).
    expect((await call('POST', `/api/v1/statuses/${id}/unfavourite`, a.token)).status).toBe(200);
    expect((await call('POST', `/api/v1/statuses/${id}/favourite`, a.token)).status).toBe(200);
    // Then a third account; once its notification is in, the pipeline is past the others.
    expect((await call('POST', `/api/v1/statuses/${id}/favourite`, c.token)).status).toBe(200);
    await eventually(async () => (await groupsOf(owner))[0]?.notifications_count === 3, 30_000, 'third favourite');
    await eventually(async () => (await pipeline.lag()) === 0, 30_000, 'pipeline caught up');

    const [group] = await groupsOf(owner);
    expect(group.notifications_count).toBe(3);
    expect(group.sample_account_ids).toEqual([c, a, b].map((u) => String(u.account._id)));
    expect(
      await collection(core.db, notifications).countDocuments({ accountId: owner.account._id, type: 'favourite' }),
    ).toBe(3);
    await expectSummariesExact(owner.account._id);
    expect((await call('GET', '/api/v2/notifications/unread_count', owner.token)).body).toEqual({ count: 1 });

    // Dismissing the newest one (v1) takes it out of the group's count, samples and newest id.
    const newest = group.most_recent_notification_id;
    expect((await call('POST', `/api/v1/notifications/${newest}/dismiss`, owner.token)).status).toBe(200);
    const [after] = await groupsOf(owner);
    expect(after.notifications_count).toBe(2);
    expect(after.sample_account_ids).toEqual([a, b].map((u) => String(u.account._id)));
    expect(after.most_recent_notification_id).not.toBe(newest);
    await expectSummariesExact(owner.account._id);

    // Dismissing the group (v2) removes its summary too.
    expect((await call('POST', `/api/v2/notifications/${after.group_key}/dismiss`, owner.token)).status).toBe(200);
    expect(await groupsOf(owner)).toEqual([]);
    await expectSummariesExact(owner.account._id);
  });

  test('a notification stored but never added to its group is repaired when its event comes again', async () => {
    const [, , , , owner, a, b] = users;
    const id = await statusOf(owner, 'crash in the middle');
    expect((await call('POST', `/api/v1/statuses/${id}/favourite`, a.token)).status).toBe(200);
    await eventually(async () => (await groupsOf(owner))[0]?.notifications_count === 1, 30_000, 'first favourite');
    const first = await collection(core.db, notifications).findOne({ accountId: owner.account._id });
    // What a writer that died between the insert and the summary update leaves behind, older
    // than the lease.
    const stranded: NotificationDoc = {
      ...first!,
      _id: first!._id + 1000n,
      fromAccountId: b.account._id,
      uniqueKey: `favourite:${b.account._id}:${owner.account._id}:${id}`,
      grouping: true,
      createdAt: new Date(Date.now() - 120_000),
    };
    await collection(core.db, notifications).insertOne(stranded);
    expect((await groupsOf(owner))[0]?.notifications_count).toBe(1);
    await sink.publish([
      {
        eventId: randomUUID(),
        type: 'FavouriteCreated',
        key: String(b.account._id),
        occurredAt: new Date(),
        payload: {
          favouriteId: '1',
          accountId: String(b.account._id),
          statusId: id,
          statusAccountId: String(owner.account._id),
          createdAt: Date.now(),
        },
      },
    ]);
    await eventually(async () => (await groupsOf(owner))[0]?.notifications_count === 2, 30_000, 'group repaired');
    expect((await collection(core.db, notifications).findOne({ _id: stranded._id }))?.grouping).toBeUndefined();
    await expectSummariesExact(owner.account._id);
  });
});

// ---- pagination against a model of Mastodon's ----

interface ModelGroup {
  groupKey: string;
  count: number;
  mostRecent: Id;
  pageMinId: Id;
  samples: Id[];
}

/** Mastodon's grouped page, by brute force over every browsable notification (newest first). */
function modelPage(
  all: NotificationDoc[],
  grouped: readonly string[],
  types: NotificationType[] | null,
  p: { maxId: Id | null; sinceId: Id | null; minId: Id | null; limit: number },
): ModelGroup[] {
  const shown = all.filter((n) => types === null || types.includes(n.type));
  const key = (n: NotificationDoc) =>
    grouped.includes(n.type) && !n.groupKey.startsWith('ungrouped-') ? n.groupKey : `ungrouped-${n._id}`;
  const lower = p.minId ?? p.sinceId;
  const inRange = shown.filter((n) => (p.maxId === null || n._id < p.maxId) && (lower === null || n._id > lower));
  const walk = p.minId !== null ? [...inRange].reverse() : inRange;
  const reps: NotificationDoc[] = [];
  const seen = new Set<string>();
  for (const n of walk) {
    if (reps.length >= p.limit) break;
    if (seen.has(key(n))) continue;
    seen.add(key(n));
    reps.push(n);
  }
  reps.sort((a, b) => (a._id > b._id ? -1 : 1));
  if (reps.length === 0) return [];
  let begin: Id | null = reps[reps.length - 1]._id;
  let end: Id | null = reps[0]._id;
  if (reps.length < p.limit) {
    if (p.minId !== null) end = p.maxId !== null ? p.maxId - 1n : null;
    else begin = p.sinceId !== null ? p.sinceId + 1n : null;
  }
  return reps.map((r) => {
    const k = key(r);
    if (k.startsWith('ungrouped-'))
      return { groupKey: k, count: 1, mostRecent: r._id, pageMinId: r._id, samples: [r.fromAccountId] };
    const members = shown.filter((n) => key(n) === k);
    const upTo = members.filter((n) => end === null || n._id <= end);
    const from = members.filter((n) => begin === null || n._id >= begin);
    return {
      groupKey: k,
      count: upTo.length,
      mostRecent: upTo[0]._id,
      pageMinId: begin === null ? members[members.length - 1]._id : from[from.length - 1]._id,
      samples: upTo.slice(0, 8).map((n) => n.fromAccountId),
    };
  });
}

test('pages of groups match the model of Mastodon for every cursor', async () => {
  const owner = users[11];
  const others = users.slice(0, 10);
  const s1 = BigInt(await statusOf(owner, 'one'));
  const s2 = BigInt(await statusOf(owner, 'two'));
  // The mentions' status (not mentioning anyone, so the pipeline adds nothing of its own).
  const mention = BigInt(await statusOf(others[0], 'hi'));
  // Interleaved: favourites of s1 by 10 accounts (more than 8 samples), reblogs of s1, favourites
  // of s2, follows and mentions in between, each created on its own so ids follow this order.
  const from = (i: number) => others[i % others.length].account._id;
  const plan: NotificationRequest[] = [];
  for (let i = 0; i < 10; i++) {
    plan.push({ type: 'favourite', accountId: owner.account._id, fromAccountId: from(i), statusId: s1 });
    if (i % 3 === 0)
      plan.push({ type: 'reblog', accountId: owner.account._id, fromAccountId: from(i + 1), statusId: s1 });
    if (i % 4 === 1)
      plan.push({ type: 'favourite', accountId: owner.account._id, fromAccountId: from(i + 2), statusId: s2 });
    if (i % 5 === 2) plan.push({ type: 'follow', accountId: owner.account._id, fromAccountId: from(i + 3) });
    if (i % 2 === 1)
      plan.push({
        type: 'mention',
        accountId: owner.account._id,
        fromAccountId: from(i),
        statusId: mention,
        variant: String(i),
      });
  }
  for (const r of plan) expect(await createNotifications(core, [r])).toHaveLength(1);
  // And one batch of several at once.
  const batch = await createNotifications(
    core,
    others.slice(0, 6).map((o) => ({
      type: 'favourite' as const,
      accountId: owner.account._id,
      fromAccountId: o.account._id,
      statusId: s2,
    })),
  );
  expect(batch.length).toBeGreaterThan(0);
  await expectSummariesExact(owner.account._id);

  const all = await collection(core.db, notifications)
    .find({ accountId: owner.account._id, filtered: { $ne: true } })
    .sort({ _id: -1 })
    .toArray();
  const ids = all.map((n) => n._id);
  const cursors: Array<Id | null> = [null, ...ids, ids[0] + 1n, ids[ids.length - 1] - 1n];

  const check = async (
    grouped: readonly string[],
    types: NotificationType[] | null,
    p: { maxId: Id | null; sinceId: Id | null; minId: Id | null; limit: number },
  ) => {
    const got = await groupPage(core, owner.account._id, { types: types ?? undefined }, grouped, p);
    const want = modelPage(all, grouped, types, p);
    expect({
      p,
      grouped,
      types,
      groups: got.groups.map((g) => ({
        groupKey: g.groupKey,
        count: g.count,
        mostRecent: g.mostRecent._id,
        pageMinId: g.pageMinId,
        samples: g.sampleAccountIds,
      })),
    }).toEqual({
      p,
      grouped,
      types,
      groups: want,
    });
  };
  for (const limit of [2, 5, 40])
    for (const c of cursors) {
      await check(GROUPABLE_TYPES, null, { maxId: c, sinceId: null, minId: null, limit });
      if (c !== null) {
        await check(GROUPABLE_TYPES, null, { maxId: null, sinceId: null, minId: c, limit });
        await check(GROUPABLE_TYPES, null, { maxId: null, sinceId: c, minId: null, limit });
      }
    }
  for (const c of [null, ids[3], ids[10]]) {
    await check(['reblog'], null, { maxId: c, sinceId: null, minId: null, limit: 5 });
    await check(GROUPABLE_TYPES, ['favourite', 'follow'], { maxId: c, sinceId: null, minId: null, limit: 3 });
    await check(['favourite'], ['favourite', 'mention'], { maxId: c, sinceId: null, minId: null, limit: 4 });
  }
  await check(GROUPABLE_TYPES, null, { maxId: ids[2], sinceId: null, minId: ids[20], limit: 3 });

  // A notification removed from the middle of a group, and a rebuild, keep the summaries exact.
  const middle = all.find((n) => n.type === 'favourite' && n.statusId === s1 && n._id !== all[0]._id)!;
  await collection(core.db, notifications).deleteOne({ _id: middle._id });
  await removeFromGroup(core, middle);
  await expectSummariesExact(owner.account._id);
  await rebuildGroup(core, owner.account._id, middle.groupKey);
  await expectSummariesExact(owner.account._id);
  // Data from before the summaries: the CLI's rebuild makes them all (and drops strays).
  await collection(core.db, notificationGroups).deleteMany({ accountId: owner.account._id });
  await collection(core.db, notificationGroups).insertOne({
    _id: `${owner.account._id}:favourite-0-0`,
    accountId: owner.account._id,
    groupKey: 'favourite-0-0',
    type: 'favourite',
    statusId: null,
    count: 1,
    firstId: 1n,
    lastId: 1n,
    lastAt: new Date(),
    samples: [],
  });
  expect(await rebuildAllGroups(core)).toBeGreaterThan(5);
  await expectSummariesExact(owner.account._id);
});

test('deleting a sender’s notifications (moderation) fixes every group they were in', async () => {
  const [owner, other, spammer, friend] = [users[8], users[9], users[10], users[7]];
  const s1 = BigInt(await statusOf(owner, 'a'));
  const s2 = BigInt(await statusOf(other, 'b'));
  for (const from of [friend, spammer])
    await createNotifications(core, [
      { type: 'favourite', accountId: owner.account._id, fromAccountId: from.account._id, statusId: s1 },
      { type: 'reblog', accountId: owner.account._id, fromAccountId: from.account._id, statusId: s1 },
      { type: 'favourite', accountId: other.account._id, fromAccountId: from.account._id, statusId: s2 },
      {
        type: 'mention',
        accountId: other.account._id,
        fromAccountId: from.account._id,
        statusId: s2,
        variant: 'x',
      },
    ]);
  expect((await groupsOf(owner)).map((g) => g.notifications_count)).toEqual([2, 2]);
  await deleteNotificationsFrom(core, spammer.account._id);
  for (const u of [owner, other]) await expectSummariesExact(u.account._id);
  expect((await groupsOf(owner)).map((g) => g.sample_account_ids)).toEqual([
    [String(friend.account._id)],
    [String(friend.account._id)],
  ]);
  expect((await groupsOf(other)).map((g) => g.type)).toEqual(['mention', 'favourite']);
});
