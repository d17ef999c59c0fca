// The author's followers in a fan-out: a page written inline, a big account's cut into slices of
// follow ids sent out as FanOutBatchRequested jobs (spread over partitions and processes).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { follows } from '../model/follows.ts';
import { statuses } from '../model/statuses.ts';
import { traceStage } from '../streaming/latencyTrace.ts';
import { exclusiveListOwners, followerListKey, remembered, type FanOutStatus } from './authorSide.ts';
import { FAN_OUT_PAGE, followerLists } from './followerLists.ts';
import { admitted } from './admitted.ts';
import { insertHome, type Announce } from './fanOutWrites.ts';

export interface FollowerSlice {
  /** Highest follow id in the slice (inclusive). */
  upTo: Id;
  /** The slice ends above this follow id (exclusive); 0n for the last one. */
  after: Id;
  /** The followers in it, when the job that cut it read them (none: read them by follow id). */
  followerIds?: Id[];
}

/** The lowest (`order` 1) or highest (-1) id of the author's follows in `filter`'s range, if any. */
async function edgeFollowId(core: Core, filter: Record<string, unknown>, order: 1 | -1): Promise<Id | null> {
  const [edge] = await collection(core.db, follows)
    .find(filter, { projection: { _id: 1 } })
    .sort({ _id: order })
    .limit(1)
    .toArray();
  return edge?._id ?? null;
}

/** An account's followers, a page of FAN_OUT_PAGE at a time, newest follow first. */
export async function* followerPages(core: Core, accountId: Id): AsyncGenerator<Id[]> {
  let before: Id | null = null;
  for (;;) {
    const page = await collection(core.db, follows)
      .find(
        { targetAccountId: accountId, ...(before !== null ? { _id: { $lt: before } } : {}) },
        { projection: { _id: 1, accountId: 1 } },
      )
      .sort({ _id: -1 })
      .limit(FAN_OUT_PAGE)
      .toArray();
    yield page.map((f) => f.accountId);
    if (page.length < FAN_OUT_PAGE) return;
    before = page[page.length - 1]!._id;
  }
}

/** Follow records read per query while cutting slices (a multiple of FAN_OUT_PAGE). */
const SLICING_PAGE = 10 * FAN_OUT_PAGE;

/** Sends slices of the author's followers out as FanOutBatchRequested jobs, spread over partitions. */
async function sendSlices(core: Core, s: FanOutStatus, slices: FollowerSlice[]): Promise<void> {
  await core.outbox.write(
    slices.map((slice) => ({
      type: 'FanOutBatchRequested' as const,
      key: `${s.statusId}:${slice.upTo}`,
      payload: {
        statusId: String(s.statusId),
        accountId: String(s.accountId),
        upToFollowId: String(slice.upTo),
        afterFollowId: String(slice.after),
        followerIds: (slice.followerIds ?? []).map(String),
      },
      verify: { collection: statuses.name, filter: { _id: s.statusId }, expect: 'exists' as const },
    })),
    async () => undefined,
  );
  traceStage(s.statusId, 'slices.sent');
}

/**
 * What lies beyond a crowded range's first SLICING_PAGE follow records is handed on as this many
 * jobs, each over an equal share of its follow ids: the cutting spreads out as a tree instead of a
 * chain of one job per SLICING_PAGE, whose every link waited for the last.
 */
const CUT_BRANCHES = 4;

/** (after, upTo] split into up to `n` ranges of equal width in follow ids, highest first. */
export function splitRange(after: Id, upTo: Id, n: number): FollowerSlice[] {
  const width = upTo - after;
  const parts = width < BigInt(n) ? 1n : BigInt(n);
  const out: FollowerSlice[] = [];
  for (let i = parts; i > 0n; i--)
    out.push({ upTo: after + (width * i) / parts, after: after + (width * (i - 1n)) / parts });
  return out;
}

/** A big account's followers are first cut into ranges meant to hold about this many each. */
const RANGE_FOLLOWERS = (FAN_OUT_PAGE * 4) / 5;

/**
 * The whole follow-id span of a big account's followers, cut into equal ranges, about one per
 * RANGE_FOLLOWERS of its follower count (null: no followers). Two index reads, no follow records:
 * every range job reads its own. Follows are not spread evenly over their ids (a burst of new
 * followers crowds a few ranges), so a range job that finds more than a page cuts its range again.
 * Only the number of jobs rests on the counter, not which followers they cover.
 */
async function followerRanges(core: Core, accountId: Id, followersCount: number): Promise<FollowerSlice[] | null> {
  const all = { targetAccountId: accountId };
  const [lowest, highest] = await Promise.all([edgeFollowId(core, all, 1), edgeFollowId(core, all, -1)]);
  if (lowest === null || highest === null) return null;
  return splitRange(lowest - 1n, highest, Math.ceil(followersCount / RANGE_FOLLOWERS));
}

/**
 * The home feeds of the author's followers in `range` (all of them when null), by follow id.
 * Up to FAN_OUT_PAGE followers are written here. The followers of an account with more than
 * SLICING_PAGE (by its counter) are sent out at once as equal ranges of follow ids, one job each
 * (followerRanges). A range that holds more than FAN_OUT_PAGE is cut instead: its first
 * SLICING_PAGE follow records into slices of FAN_OUT_PAGE, and what lies below them into
 * CUT_BRANCHES more jobs that cut again when they run. So no handler reads more than one page, the
 * first slices start at once, and the cutting itself is spread over partitions and processes. Every
 * job is idempotent (a redelivered one sends the same slices again; feed writes are ZADDs).
 */
export async function fanOutToFollowerSlice(
  core: Core,
  s: FanOutStatus,
  range: FollowerSlice | null,
  authorDomain: string | null,
  announce?: Announce,
  followersCount = 0,
): Promise<Id[]> {
  if (s.visibility === 'direct') return [];
  if (range?.followerIds && range.followerIds.length > 0)
    return fanOutToFollowers(core, s, range.followerIds, authorDomain, announce);
  if (range === null && followersCount > SLICING_PAGE) {
    const ranges = await followerRanges(core, s.accountId, followersCount);
    if (ranges) await sendSlices(core, s, ranges);
    return [];
  }
  const inRange = (after: Id, upTo: Id | null) => ({
    targetAccountId: s.accountId,
    _id: upTo !== null ? { $lte: upTo, $gt: after } : { $gt: after },
  });
  if (range === null) {
    // Most accounts' followers are one list, kept in Redis (followerLists.ts), maybe read with the
    // consumer batch already; null: more than a page, read and cut below.
    const author = { _id: s.accountId, domain: authorDomain, followersCount };
    const list = await remembered(core, followerListKey(s.statusId), async () => {
      const lists = await followerLists(core, [author]);
      // Not `??`: null (more than a page) must stay null.
      return lists.has(s.accountId) ? lists.get(s.accountId)! : [];
    });
    if (list !== null) return fanOutToFollowers(core, s, list, authorDomain, announce);
  }
  const floor = range?.after ?? 0n;
  const page = await collection(core.db, follows)
    .find(inRange(floor, range?.upTo ?? null), { projection: { _id: 1, accountId: 1 } })
    .sort({ _id: -1 })
    .limit(SLICING_PAGE + 1)
    .toArray();
  if (page.length <= FAN_OUT_PAGE)
    return fanOutToFollowers(
      core,
      s,
      page.map((f) => f.accountId),
      authorDomain,
      announce,
    );
  const slices: FollowerSlice[] = [];
  const rest = page[SLICING_PAGE];
  if (rest) {
    // The rest first: the next cuts start while these slices are written. Split from just below
    // its lowest follow id, not from the floor, so that the shares hold followers.
    const lowest = await edgeFollowId(core, inRange(floor, rest._id), 1);
    slices.push(...splitRange(lowest !== null ? lowest - 1n : floor, rest._id, CUT_BRANCHES));
  }
  // Each slice carries its followers, so its job reads no follow records again.
  for (let i = 0; i < Math.min(page.length, SLICING_PAGE); i += FAN_OUT_PAGE) {
    slices.push({
      upTo: page[i]!._id,
      after: page[i + FAN_OUT_PAGE]?._id ?? floor,
      followerIds: page.slice(i, Math.min(i + FAN_OUT_PAGE, SLICING_PAGE)).map((f) => f.accountId),
    });
  }
  await sendSlices(core, s, slices);
  return [];
}

/** Home feeds of these followers of the author: the active local ones the insert filters admit. */
async function fanOutToFollowers(
  core: Core,
  s: FanOutStatus,
  followers: Id[],
  authorDomain: string | null,
  announce?: Announce,
): Promise<Id[]> {
  if (s.visibility === 'direct' || followers.length === 0) return [];
  const [exclusive, allowed] = await Promise.all([
    remembered(core, `${s.statusId}:exclusive`, () => exclusiveListOwners(core, s)),
    admitted(core, s, followers, authorDomain),
  ]);
  const recipients = allowed.filter((id) => !exclusive.has(id));
  traceStage(s.statusId, 'fanout.queried');
  return insertHome(core, s, recipients, announce);
}
