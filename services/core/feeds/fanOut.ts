// Who gets a new status in their home and list feeds (Mastodon's FanOutOnWriteService and
// FeedManager#filter?): the author, local followers, members' list owners and followers of its
// hashtags, minus those who block or mute the author (or a reblogged author), block its domain,
// follow without reblogs (for reblogs), or do not follow the replied-to account (for replies).
// Only active local users' home feeds are written (activity.ts): feeds.ts's insertIntoFeeds skips
// accounts without an activity marker, which remote and inactive accounts lack.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, accountView } from '../model/accounts.ts';
import { readThrough } from '../db/docCache.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { listMembers, lists } from '../model/lists.ts';
import { tags } from '../model/tags.ts';
import { tagFollows } from '../model/tagFollows.ts';
import { statuses, type StatusDoc, type Visibility } from '../model/statuses.ts';
import { addToFeed, feedKey, insertIntoFeeds } from './feeds.ts';
import { activeKey, feedTtlSeconds } from './activity.ts';
import { traceStage } from '../streaming/latencyTrace.ts';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';

export interface FanOutStatus {
  statusId: Id;
  accountId: Id;
  visibility: Visibility;
  inReplyToAccountId: Id | null;
  mentionedAccountIds: Id[];
  tagNames: string[];
  reblogOfId: Id | null;
  reblogOfAccountId: Id | null;
}

/** Where `remembered` keeps a status's first follower page (read ahead for a batch). */
export const followerPageKey = (statusId: Id) => `${statusId}:followerPage`;

/** Follower pages: a big account's fan-out reads and writes in slices of this many. */
export const FAN_OUT_PAGE = 1000;

/**
 * `$in` lists are cut into chunks of this many ids, queried in parallel: the MongoDB-wire server
 * matches `$in` in time that grows with the square of the list (1,000 ids: about 40 ms; 250: 3 ms).
 */
const IN_CHUNK = 250;

/** Runs `query` over `ids` in parallel chunks of IN_CHUNK and concatenates the results. */
async function inChunks<T>(ids: Id[], query: (chunk: Id[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length <= IN_CHUNK) return ids.length === 0 ? [] : query(ids);
  const chunks: Id[][] = [];
  for (let i = 0; i < ids.length; i += IN_CHUNK) chunks.push(ids.slice(i, i + IN_CHUNK));
  return (await Promise.all(chunks.map(query))).flat();
}

/**
 * Relations to the author are read from the author's side (indexed by target, usually few: who
 * blocks or mutes this account) when there are at most this many; beyond, by the recipients.
 */
const BY_TARGET_LIMIT = 5000;

interface Related {
  accountId: Id;
  expiresAt?: Date | null;
}

/**
 * What every slice of one status asks about its author's side (who blocks, mutes or follows
 * without reblogs the author, whose exclusive lists hold them): the same for all its slices, so
 * each process keeps the answers for a few seconds instead of asking the database once per slice
 * of a big account. A block or mute made meanwhile takes the author's statuses out of that feed
 * through its own event, as for any status fanned out before it.
 */
const AUTHOR_SIDE_MS = 10_000;
const authorSideOf = cachePerOwner(() => new TtlCache<string, Promise<unknown>>(AUTHOR_SIDE_MS, 1000));

export function remembered<T>(core: Core, key: string, load: () => Promise<T>): Promise<T> {
  const memo = authorSideOf(core.db);
  const hit = memo.get(key);
  if (hit) return hit as Promise<T>;
  const value = load();
  value.catch(() => memo.delete(key));
  memo.set(key, value);
  return value;
}

/**
 * Of `recipients`, the documents of `coll` matching `about` (a condition on the author's side,
 * e.g. `{targetAccountId: {$in: authors}}`) whose `accountId` is one of them. Read by `about`
 * alone when that is small (`byAbout`, remembered per status), else by `accountId: {$in:
 * recipients}` in chunks; the same result.
 */
async function relatedAmong(
  query: (filter: Record<string, unknown>, limit: number) => Promise<Related[]>,
  byAbout: Promise<Related[]>,
  about: Record<string, unknown>,
  recipients: Id[],
): Promise<Related[]> {
  const all = await byAbout;
  if (all.length <= BY_TARGET_LIMIT) {
    const wanted = new Set(recipients);
    return all.filter((d) => wanted.has(d.accountId));
  }
  return inChunks(recipients, (chunk) => query({ ...about, accountId: { $in: chunk } }, 0));
}

/** Of `recipients`, those whose feeds may take the status (the insert filters). */
async function admitted(core: Core, s: FanOutStatus, recipients: Id[], authorDomain: string | null): Promise<Id[]> {
  if (recipients.length === 0) return [];
  const authors = [s.accountId, ...(s.reblogOfAccountId !== null ? [s.reblogOfAccountId] : [])];
  const now = new Date();
  const among = (name: string, coll: { name: string }, about: Record<string, unknown>) => {
    const query = (filter: Record<string, unknown>, limit: number) =>
      core.db
        .collection<Related>(coll.name)
        .find(filter, { projection: { _id: 0, accountId: 1, expiresAt: 1 }, limit })
        .toArray();
    const byAbout = remembered(core, `${s.statusId}:${name}`, () => query(about, BY_TARGET_LIMIT + 1));
    return relatedAmong(query, byAbout, about, recipients);
  };
  // A reblog is also kept from those who block the reblogged author's domain (Mastodon's filter_from_home?).
  const reblogged =
    s.reblogOfAccountId === null
      ? null
      : await remembered(core, `${s.statusId}:rebloggedDomain`, () =>
          collection(core.db, accounts).findOne({ _id: s.reblogOfAccountId! }, { projection: { domain: 1 } }),
        );
  const domains = [...new Set([authorDomain, reblogged?.domain ?? null])].filter((d): d is string => d !== null);
  const [blocking, muting, domainBlocked, replyFollowers, noReblogs] = await Promise.all([
    among('blocking', blocks, { targetAccountId: { $in: authors } }),
    among('muting', mutes, { targetAccountId: { $in: authors } }),
    domains.length > 0
      ? among('domainBlocked', accountDomainBlocks, { domain: { $in: domains } })
      : Promise.resolve([]),
    s.inReplyToAccountId !== null && s.inReplyToAccountId !== s.accountId
      ? among('replyFollowers', follows, { targetAccountId: s.inReplyToAccountId })
      : Promise.resolve(null),
    s.reblogOfId !== null
      ? among('noReblogs', follows, { targetAccountId: s.accountId, showReblogs: false })
      : Promise.resolve([]),
  ]);
  const out = new Set<bigint>([
    ...blocking.map((b) => b.accountId),
    ...muting.filter((m) => !m.expiresAt || m.expiresAt > now).map((m) => m.accountId),
    ...domainBlocked.map((d) => d.accountId),
    ...noReblogs.map((f) => f.accountId),
  ]);
  const replyOk = replyFollowers ? new Set(replyFollowers.map((f) => f.accountId)) : null;
  return recipients.filter((r) => r === s.accountId || (!out.has(r) && (replyOk === null || replyOk.has(r))));
}

export interface FanOutResult {
  /** Accounts whose home feed took the status. */
  home: Id[];
  /** Lists whose feed took it. */
  lists: Id[];
}

/**
 * Told about every set of feeds that takes the status once, as soon as it is known: for a status
 * (not a reblog, which a feed may skip) before and while those feeds are written, so that the
 * streams get it without waiting for the writes. Awaited before the fan-out resolves.
 */
export type Announce = (feeds: FanOutResult) => Promise<void>;

/**
 * Writes the home feeds of those of `recipients` who are active local users, in one Redis call,
 * then announces them; the ones that took the status.
 */
async function insertHome(core: Core, s: FanOutStatus, recipients: Id[], announce?: Announce): Promise<Id[]> {
  if (recipients.length === 0) return [];
  const took = await insertIntoFeeds(
    core.redis,
    recipients.map((r) => feedKey('home', r)),
    s.statusId,
    { reblogOf: s.reblogOfId, markers: recipients.map((r) => activeKey(r)), ttlSeconds: feedTtlSeconds(core) },
  );
  traceStage(s.statusId, 'fanout.written');
  const reached = took.map((i) => recipients[i]!);
  await announce?.({ home: reached, lists: [] });
  return reached;
}

/** Inserts a status into every feed it belongs to. */
export async function fanOutStatus(
  core: Core,
  s: FanOutStatus,
  heartbeat: () => Promise<void> = async () => {},
  announce?: Announce,
): Promise<FanOutResult> {
  // From the document cache the request's token check filled (one Redis read, not MongoDB).
  const author = (await readThrough(core, accountView, [s.accountId])).get(s.accountId);
  if (!author) return { home: [], lists: [] };
  const insert = async (recipients: Id[]) =>
    insertHome(core, s, await admitted(core, s, recipients, author.domain), announce);

  if (s.visibility === 'direct') {
    return {
      home: await insert([...new Set([s.accountId, ...s.mentionedAccountIds])]),
      lists: [],
    };
  }
  // The author's own feed, the followers' and the lists' are independent: written concurrently,
  // so that the followers' streams get the status sooner.
  const own = author.domain === null ? insert([s.accountId]) : Promise.resolve([]);
  // Local followers: inline for an ordinary account; a big one's are cut into slices (see
  // fanOutToFollowerSlice), so several processes and partitions share the work.
  // A remote author's counter is its followers everywhere, not the follow records here: only a
  // local author's sizes the first cut.
  const followers = fanOutToFollowerSlice(
    core,
    s,
    null,
    author.domain,
    announce,
    author.domain === null ? author.followersCount : 0,
  );
  const lists = fanOutToLists(core, s, author.domain).then(async (reached) => {
    await announce?.({ home: [], lists: reached });
    return reached;
  });
  const [ownReached, reachedFollowers, listsReached] = await Promise.all([own, followers, lists]);
  const delivered = [...ownReached, ...reachedFollowers];
  await heartbeat();

  if (s.visibility === 'public' && s.reblogOfId === null)
    delivered.push(...(await fanOutToTagFollowers(core, s, author.domain, new Set(delivered), announce)));
  return { home: delivered, lists: listsReached };
}

/** The lists that hold the author, read once per status (exclusive owners and list feeds both need them). */
function authorMemberships(core: Core, s: FanOutStatus): Promise<Array<{ listId: Id }>> {
  return remembered(core, `${s.statusId}:memberships`, () =>
    collection(core.db, listMembers)
      .find({ accountId: s.accountId }, { projection: { _id: 0, listId: 1 } })
      .toArray(),
  );
}

/**
 * The author-side answers of a consumer's batch of new statuses in one read per kind (who blocks
 * or mutes each author, which lists hold them), handed to `remembered` under each status's keys:
 * a status's fan-out then asks the database only for its followers. An answer too big to share
 * (BY_TARGET_LIMIT) is left for the status to read as before.
 */
export async function rememberAuthorSides(core: Core, batch: readonly FanOutStatus[]): Promise<void> {
  const plain = batch.filter((s) => s.reblogOfId === null && s.visibility !== 'direct');
  if (plain.length < 2) return;
  const authors = [...new Set(plain.map((s) => s.accountId))];
  const byTarget = (name: string) =>
    core.db
      .collection<Related & { targetAccountId: Id }>(name)
      .find(
        { targetAccountId: { $in: authors } },
        { projection: { _id: 0, accountId: 1, expiresAt: 1, targetAccountId: 1 }, limit: BY_TARGET_LIMIT + 1 },
      )
      .toArray();
  const [blocking, muting, memberships] = await Promise.all([
    byTarget(blocks.name),
    byTarget(mutes.name),
    collection(core.db, listMembers)
      .find({ accountId: { $in: authors } }, { projection: { _id: 0, listId: 1, accountId: 1 } })
      .toArray(),
  ]);
  const of = <T extends object>(rows: T[], key: (r: T) => Id, author: Id, strip: (r: T) => object) =>
    rows.filter((r) => key(r) === author).map(strip);
  for (const s of plain) {
    if (blocking.length <= BY_TARGET_LIMIT)
      remembered(core, `${s.statusId}:blocking`, async () =>
        of(
          blocking,
          (r) => r.targetAccountId,
          s.accountId,
          ({ accountId, expiresAt }) => ({ accountId, expiresAt }),
        ),
      );
    if (muting.length <= BY_TARGET_LIMIT)
      remembered(core, `${s.statusId}:muting`, async () =>
        of(
          muting,
          (r) => r.targetAccountId,
          s.accountId,
          ({ accountId, expiresAt }) => ({ accountId, expiresAt }),
        ),
      );
    remembered(core, `${s.statusId}:memberships`, async () =>
      of(
        memberships,
        (r) => r.accountId,
        s.accountId,
        ({ listId }) => ({ listId }),
      ),
    );
  }
}

/** Owners of exclusive lists that hold the author: the status goes to that list, not their home. */
async function exclusiveListOwners(core: Core, s: FanOutStatus): Promise<Set<bigint>> {
  const memberships = await authorMemberships(core, s);
  if (memberships.length === 0) return new Set();
  const exclusive = await collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) }, exclusive: true }, { projection: { accountId: 1 } })
    .toArray();
  return new Set(exclusive.map((l) => l.accountId));
}

async function fanOutToLists(core: Core, s: FanOutStatus, authorDomain: string | null): Promise<Id[]> {
  if (s.visibility === 'direct') return [];
  const memberships = await authorMemberships(core, s);
  if (memberships.length === 0) return [];
  const found = await collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) } })
    .toArray();
  const owners = await admitted(core, s, [...new Set(found.map((l) => l.accountId))], authorDomain);
  const allowed = new Set(owners);
  const reached: Id[] = [];
  for (const list of found) {
    if (!allowed.has(list.accountId)) continue;
    if (s.inReplyToAccountId !== null && s.inReplyToAccountId !== s.accountId) {
      // Replies by policy: none; only to list members; or to anyone the owner follows (checked above).
      if (list.repliesPolicy === 'none') continue;
      if (list.repliesPolicy === 'list') {
        const inList = await collection(core.db, listMembers).countDocuments(
          { listId: list._id, accountId: s.inReplyToAccountId },
          { limit: 1 },
        );
        if (inList === 0) continue;
      }
    }
    if (await addToFeed(core.redis, feedKey('list', list._id), s.statusId, s.reblogOfId)) reached.push(list._id);
  }
  return reached;
}

/** The accounts that follow one of these hashtags (normalized names). */
export async function tagFollowerIds(core: Core, tagNames: string[]): Promise<Id[]> {
  if (tagNames.length === 0) return [];
  const tagIds = (
    await collection(core.db, tags)
      .find({ nameNormalized: { $in: tagNames } }, { projection: { _id: 1 } })
      .toArray()
  ).map((t) => t._id);
  if (tagIds.length === 0) return [];
  const followed = await collection(core.db, tagFollows)
    .find({ tagId: { $in: tagIds } }, { projection: { accountId: 1 } })
    .toArray();
  return [...new Set(followed.map((f) => f.accountId))];
}

async function fanOutToTagFollowers(
  core: Core,
  s: FanOutStatus,
  authorDomain: string | null,
  done: Set<bigint>,
  announce?: Announce,
): Promise<Id[]> {
  const followers = await tagFollowerIds(core, s.tagNames);
  if (followers.length === 0) return [];
  const tagged = { ...s, inReplyToAccountId: null };
  const recipients = followers.filter((id) => !done.has(id));
  return insertHome(core, tagged, await admitted(core, tagged, recipients, authorDomain), announce);
}

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
  const floor = range?.after ?? 0n;
  const readPage = () =>
    collection(core.db, follows)
      .find(inRange(floor, range?.upTo ?? null), { projection: { _id: 1, accountId: 1 } })
      .sort({ _id: -1 })
      .limit(SLICING_PAGE + 1)
      .toArray();
  // A small account's whole first page may have been read with its consumer batch (followersAhead.ts).
  const page = range === null ? await remembered(core, followerPageKey(s.statusId), readPage) : await readPage();
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

/** What fan-out needs of a stored status (for slice jobs, which carry only ids). */
export function fanOutStatusOf(doc: StatusDoc): FanOutStatus {
  return {
    statusId: doc._id,
    accountId: doc.accountId,
    visibility: doc.visibility,
    inReplyToAccountId: doc.inReplyToAccountId,
    mentionedAccountIds: doc.mentionedAccountIds,
    tagNames: doc.tagNames,
    reblogOfId: doc.reblogOfId,
    reblogOfAccountId: doc.reblogOfAccountId,
  };
}
