// Group summaries (`notification_groups`): one document per notification group of a recipient
// with its count, oldest and newest ids and newest senders, so that /api/v2/notifications reads a
// page of groups without reading the groups' notifications.
//
// Writers keep them right:
// - the notifications pipeline adds what it inserted (`addToGroups`: one atomic upsert per group
//   and batch: `$inc` the count, `$min`/`$max` the bounds, `$push` the samples sorted and cut to
//   8). A redelivered event finds its notification stored and adds nothing; a notification
//   stored but not yet added carries `grouping: true` until it is, and a redelivery that finds
//   the flag after the writer's lease repairs the group (`rebuildGroup`);
// - removing one notification (`removeFromGroup`) decrements with a `findOneAndUpdate` and
//   re-reads the group's ends from the (accountId, groupKey, _id) index when the removed one was
//   an end or a sample; removing a group or everything removes the summaries with it;
// - bulk changes (a sender's notifications deleted by moderation, filtered notifications accepted
//   into the list) rebuild the groups they touched.
import type { AnyBulkWriteOperation } from 'mongodb';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import {
  groupDocId,
  notificationGroups,
  notifications,
  SAMPLE_ACCOUNTS_SIZE,
  type NotificationDoc,
  type NotificationGroupDoc,
} from '../model/notifications.ts';

const desc = (a: { _id: Id }, b: { _id: Id }) => (a._id > b._id ? -1 : a._id < b._id ? 1 : 0);

/** Adds newly stored notifications to their summaries (filtered ones are not summarised). */
export async function addToGroups(core: Core, docs: readonly NotificationDoc[]): Promise<void> {
  const byGroup = new Map<string, NotificationDoc[]>();
  for (const d of docs) {
    if (d.filtered) continue;
    const id = groupDocId(d.accountId, d.groupKey);
    const list = byGroup.get(id);
    if (list) list.push(d);
    else byGroup.set(id, [d]);
  }
  if (byGroup.size === 0) return;
  const ops: AnyBulkWriteOperation<NotificationGroupDoc>[] = [...byGroup].map(([_id, list]) => {
    list.sort(desc);
    const newest = list[0];
    const oldest = list[list.length - 1];
    return {
      updateOne: {
        filter: { _id },
        update: {
          $setOnInsert: {
            accountId: newest.accountId,
            groupKey: newest.groupKey,
            type: newest.type,
            statusId: newest.statusId,
          },
          $inc: { count: list.length },
          $min: { firstId: oldest._id },
          $max: { lastId: newest._id, lastAt: newest.createdAt },
          $push: {
            samples: {
              $each: list.slice(0, SAMPLE_ACCOUNTS_SIZE).map((n) => ({ id: n._id, from: n.fromAccountId })),
              $sort: { id: -1 },
              $slice: SAMPLE_ACCOUNTS_SIZE,
            },
          },
        },
        upsert: true,
      },
    };
  });
  await bulkUpsert(core, ops);
  const flagged = docs.filter((d) => d.grouping).map((d) => d._id);
  if (flagged.length)
    await collection(core.db, notifications).updateMany({ _id: { $in: flagged } }, { $unset: { grouping: '' } });
}

/** Runs upserts; two first upserts of one summary can race on its `_id` (real MongoDB): the loser retries. */
async function bulkUpsert(core: Core, ops: AnyBulkWriteOperation<NotificationGroupDoc>[]): Promise<void> {
  const coll = collection(core.db, notificationGroups);
  for (let attempt = 0; ops.length > 0; attempt++) {
    try {
      await coll.bulkWrite(ops, { ordered: false });
      return;
    } catch (err) {
      const writeErrors = (err as { writeErrors?: Array<{ index: number; code?: number }> }).writeErrors;
      if (attempt >= 3 || !writeErrors?.length || writeErrors.some((e) => e.code !== 11000)) throw err;
      const retry = new Set(writeErrors.map((e) => e.index));
      ops = ops.filter((_, i) => retry.has(i));
    }
  }
}

function browsable(accountId: Id, groupKey: string) {
  return { accountId, groupKey, filtered: { $ne: true } };
}

/** A group's newest notifications (its sample) and its oldest one's id. */
function groupEnds(core: Core, q: ReturnType<typeof browsable>) {
  const coll = collection(core.db, notifications);
  return Promise.all([
    coll.find(q).sort({ _id: -1 }).limit(SAMPLE_ACCOUNTS_SIZE).toArray(),
    coll
      .find(q, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(1)
      .toArray(),
  ]);
}

/**
 * Recomputes one group's summary from its notifications (reads the whole group: only for repairs
 * and bulk changes, never on the read path); deletes it when the group is empty.
 */
export async function rebuildGroup(core: Core, accountId: Id, groupKey: string): Promise<void> {
  const coll = collection(core.db, notifications);
  await coll.updateMany({ accountId, groupKey, grouping: true }, { $unset: { grouping: '' } });
  const q = browsable(accountId, groupKey);
  const [[recent, oldest], count] = await Promise.all([groupEnds(core, q), coll.countDocuments(q)]);
  const _id = groupDocId(accountId, groupKey);
  const groups = collection(core.db, notificationGroups);
  if (recent.length === 0 || count === 0) {
    await groups.deleteOne({ _id });
    return;
  }
  const newest = recent[0];
  await groups.updateOne(
    { _id },
    {
      $set: {
        accountId,
        groupKey,
        type: newest.type,
        statusId: newest.statusId,
        count,
        firstId: oldest[0]?._id ?? newest._id,
        lastId: newest._id,
        lastAt: newest.createdAt,
        samples: recent.map((n) => ({ id: n._id, from: n.fromAccountId })),
      },
    },
    { upsert: true },
  );
}

/** After `doc` was deleted (by whoever saw `deletedCount: 1`): takes it out of its summary. */
export async function removeFromGroup(core: Core, doc: NotificationDoc): Promise<void> {
  if (doc.filtered) return;
  const groups = collection(core.db, notificationGroups);
  const _id = groupDocId(doc.accountId, doc.groupKey);
  if (doc.groupKey.startsWith('ungrouped-')) {
    await groups.deleteOne({ _id });
    return;
  }
  const after = await groups.findOneAndUpdate({ _id }, { $inc: { count: -1 } }, { returnDocument: 'after' });
  if (!after) return;
  if (after.count <= 0) {
    await groups.deleteOne({ _id, count: { $lte: 0 } });
    return;
  }
  if (doc._id !== after.lastId && doc._id !== after.firstId && !after.samples.some((s) => s.id === doc._id)) return;
  const [recent, oldest] = await groupEnds(core, browsable(doc.accountId, doc.groupKey));
  if (recent.length === 0) {
    await groups.deleteOne({ _id });
    return;
  }
  // Not a compare-and-set: a notification added to this group at this very moment may show twice
  // among the samples until the next change (readers drop repeated ids).
  await groups.updateOne(
    { _id },
    {
      $set: {
        samples: recent.map((n) => ({ id: n._id, from: n.fromAccountId })),
        lastId: recent[0]._id,
        lastAt: recent[0].createdAt,
        firstId: oldest[0]?._id ?? recent[0]._id,
      },
    },
  );
}

/** Deletes one group (v2 dismiss). */
export async function deleteGroup(core: Core, accountId: Id, groupKey: string): Promise<void> {
  await collection(core.db, notifications).deleteMany({ accountId, groupKey });
  await collection(core.db, notificationGroups).deleteOne({ _id: groupDocId(accountId, groupKey) });
}

/** Deletes all of an account's notifications (clear, account deletion). */
export async function clearNotifications(core: Core, accountId: Id): Promise<void> {
  await collection(core.db, notifications).deleteMany({ accountId });
  await collection(core.db, notificationGroups).deleteMany({ accountId });
}

/** Rebuilds the summaries of the given (recipient, group) pairs; ungrouped ones are looked at by id. */
export async function rebuildGroups(core: Core, touched: Iterable<{ accountId: Id; groupKey: string }>): Promise<void> {
  const seen = new Set<string>();
  for (const t of touched) {
    const id = groupDocId(t.accountId, t.groupKey);
    if (seen.has(id)) continue;
    seen.add(id);
    await rebuildGroup(core, t.accountId, t.groupKey);
  }
}

/** Deletes every notification sent by `fromAccountId` (moderation) and fixes the groups they were in. */
export async function deleteNotificationsFrom(core: Core, fromAccountId: Id): Promise<void> {
  const coll = collection(core.db, notifications);
  const touched = await coll.find({ fromAccountId }, { projection: { accountId: 1, groupKey: 1 } }).toArray();
  await coll.deleteMany({ fromAccountId });
  await rebuildGroups(core, touched);
}

/**
 * Rebuilds every summary from the notifications (`npm run cli -- notifications rebuild-groups`):
 * for data stored before summaries existed, or after a manual repair. Reads everything.
 */
export async function rebuildAllGroups(core: Core, progress: (done: number) => void = () => {}): Promise<number> {
  const pairs = collection(core.db, notifications).aggregate<{ _id: { accountId: Id; groupKey: string } }>([
    { $group: { _id: { accountId: '$accountId', groupKey: '$groupKey' } } },
  ]);
  const kept = new Set<string>();
  let done = 0;
  for await (const { _id } of pairs) {
    await rebuildGroup(core, _id.accountId, _id.groupKey);
    kept.add(groupDocId(_id.accountId, _id.groupKey));
    if (++done % 1000 === 0) progress(done);
  }
  for await (const g of collection(core.db, notificationGroups).find({}, { projection: { _id: 1 } }))
    if (!kept.has(g._id)) await collection(core.db, notificationGroups).deleteOne({ _id: g._id });
  return done;
}
