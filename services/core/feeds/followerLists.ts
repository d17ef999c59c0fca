// The followers a post's fan-out writes to, kept in Redis per author (db/groupCache.ts, ADR 0023).
// Reading them was most of the MongoDB server's work per post: 50 follow records a post in the
// api benchmark, found, encoded and sent for every post, while an account's followers change far
// less often than it posts. Every write to `follows` drops the entries of the accounts it touches.
// Only lists of up to FAN_OUT_PAGE followers are kept: a bigger account's fan-out reads its
// followers in slices (followerSlices.ts), and its entry only says so.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { idListCodec, readGroups, type CachedGroup } from '../db/groupCache.ts';
import { readThrough } from '../db/docCache.ts';
import { accountView, type CachedAccount } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { followerListKey, remembered, type FanOutStatus } from './authorSide.ts';

/** Follower pages: a big account's fan-out reads and writes in slices of this many. */
export const FAN_OUT_PAGE = 1000;

/** The followers of an account: follows by target. */
export const FOLLOWERS: CachedGroup = { collection: follows.name, field: 'targetAccountId' };

/** An account's followers, or null when it has more than FAN_OUT_PAGE (read in slices). */
export type FollowerList = Id[] | null;

/** Authors per query (the MongoDB-wire server's `$in` slows down with the square of its list). */
const MAX_AUTHORS = 250;
/** Follow records a counter may lag behind (a follow written, its counter not yet). */
const SLACK = 100;

type Author = Pick<CachedAccount, '_id' | 'domain' | 'followersCount'>;

/** Each author's followers (those of `authors` with none are given an empty list). */
export function followerLists(core: Core, authors: readonly Author[]): Promise<Map<Id, FollowerList>> {
  const byId = new Map(authors.map((a) => [a._id, a]));
  return readGroups(
    core,
    FOLLOWERS,
    [...byId.keys()],
    (missing) =>
      readFollowerLists(
        core,
        missing.map((id) => byId.get(id)!),
      ),
    idListCodec,
  );
}

/**
 * From MongoDB: local authors small enough by their counter together, in one query whose limit
 * tells whether the counters were right; the others (remote authors, whose counter counts
 * followers everywhere, big ones, or a batch whose counters lagged) one query each.
 */
async function readFollowerLists(core: Core, authors: readonly Author[]): Promise<Map<Id, FollowerList>> {
  const out = new Map<Id, FollowerList>();
  const small = authors.filter((a) => a.domain === null && a.followersCount <= FAN_OUT_PAGE);
  const alone = authors.filter((a) => !small.includes(a));
  for (let i = 0; i < small.length; i += MAX_AUTHORS) {
    const part = small.slice(i, i + MAX_AUTHORS);
    const expected = part.reduce((n, a) => n + a.followersCount, 0) + SLACK;
    // Unsorted: the limit only tells whether all came back.
    const rows = await collection(core.db, follows)
      .find(
        { targetAccountId: { $in: part.map((a) => a._id) } },
        { projection: { _id: 0, accountId: 1, targetAccountId: 1 } },
      )
      .limit(expected + 1)
      .toArray();
    if (rows.length > expected) {
      alone.push(...part);
      continue;
    }
    const lists = new Map<Id, Id[]>(part.map((a) => [a._id, []]));
    for (const r of rows) lists.get(r.targetAccountId)?.push(r.accountId);
    for (const [id, list] of lists) out.set(id, list.length > FAN_OUT_PAGE ? null : list);
  }
  await Promise.all(
    alone.map(async (a) => {
      const rows = await collection(core.db, follows)
        .find({ targetAccountId: a._id }, { projection: { _id: 0, accountId: 1 } })
        .limit(FAN_OUT_PAGE + 1)
        .toArray();
      out.set(a._id, rows.length > FAN_OUT_PAGE ? null : rows.map((r) => r.accountId));
    }),
  );
  return out;
}

/**
 * The followers of a consumer batch's authors in one read, each new status's list kept under its
 * key (`remembered`) for its fan-out, which otherwise reads its author's alone.
 */
export async function rememberFollowerLists(core: Core, batch: readonly FanOutStatus[]): Promise<void> {
  const plain = batch.filter((s) => s.visibility !== 'direct');
  if (plain.length < 2) return;
  const authors = await readThrough(core, accountView, [...new Set(plain.map((s) => s.accountId))]);
  // A big local account's fan-out reads no list (followerSlices.ts).
  const listed = [...authors.values()].filter((a) => a.domain !== null || a.followersCount <= FAN_OUT_PAGE);
  const lists = await followerLists(core, listed);
  for (const s of plain) {
    const list = lists.get(s.accountId);
    if (list !== undefined) void remembered(core, followerListKey(s.statusId), async () => list);
  }
}
