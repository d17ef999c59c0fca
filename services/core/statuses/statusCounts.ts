// Denormalised counters that new statuses change, shared by posting (one status) and the ingress
// (a batch): the authors' statuses_count, and a count per status (replies, reblogs, favourites).
import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import type { Id } from '../ids.ts';
import type { CountChange } from '../db/countOnce.ts';

/**
 * The authors' statuses_count changes for new statuses (Mastodon does not count direct ones): one
 * per author, by its number of statuses, with its latest time, marked by its newest status so that
 * countOnce applies it once however often it is sent.
 */
export function authorStatusCountChanges(
  posts: ReadonlyArray<{ _id: Id; accountId: Id; createdAt: Date; visibility: string }>,
): CountChange[] {
  const byAccount = new Map<Id, { n: number; at: Date; last: Id }>();
  for (const p of posts) {
    if (p.visibility === 'direct') continue;
    const seen = byAccount.get(p.accountId);
    if (!seen) byAccount.set(p.accountId, { n: 1, at: p.createdAt, last: p._id });
    else
      byAccount.set(p.accountId, {
        n: seen.n + 1,
        at: p.createdAt > seen.at ? p.createdAt : seen.at,
        last: p._id > seen.last ? p._id : seen.last,
      });
  }
  return [...byAccount].map(([_id, { n, at, last }]) => ({
    _id,
    inc: { statusesCount: n },
    max: { lastStatusAt: at },
    mark: `s+${last}`,
  }));
}

/** The status whose replies_count `s` counts in, if any (Mastodon counts public and unlisted replies). */
export function countedParentOf(s: { inReplyToId: Id | null; visibility: string }): Id | null {
  return s.inReplyToId !== null && (s.visibility === 'public' || s.visibility === 'unlisted') ? s.inReplyToId : null;
}

/** How many times each id occurs. */
export function tally(ids: Iterable<Id>): Map<Id, number> {
  const counts = new Map<Id, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** Adds `sign × n` to `field` of each document `counts` names; one unordered bulk write, none when empty. */
export async function incrementCounts<T extends { _id: Id }>(
  coll: Collection<T>,
  field: keyof T & string,
  counts: ReadonlyMap<Id, number>,
  sign: 1 | -1 = 1,
): Promise<void> {
  if (counts.size === 0) return;
  const ops = [...counts].map(([_id, n]) => ({
    updateOne: { filter: { _id }, update: { $inc: { [field]: sign * n } } },
  }));
  await coll.bulkWrite(ops as unknown as AnyBulkWriteOperation<T>[], { ordered: false });
}
