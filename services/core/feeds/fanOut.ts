// Who gets a new status in their home and list feeds (Mastodon's FanOutOnWriteService and
// FeedManager#filter?): the author, local followers, members' list owners and followers of its
// hashtags, minus those who block or mute the author (or a reblogged author), block its domain,
// follow without reblogs (for reblogs), or do not follow the replied-to account (for replies).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { listMembers, lists } from '../model/lists.ts';
import { tags } from '../model/tags.ts';
import { tagFollows } from '../model/tagFollows.ts';
import { statuses, type StatusDoc, type Visibility } from '../model/statuses.ts';
import { addToFeed, addToFeeds, feedKey } from './feeds.ts';

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

/** Follower pages: a big account's fan-out reads and writes in slices of this many. */
export const FAN_OUT_PAGE = 1000;

async function localAmong(core: Core, ids: Id[]): Promise<Id[]> {
  if (ids.length === 0) return [];
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids }, domain: null }, { projection: { _id: 1 } })
    .toArray();
  return found.map((a) => a._id);
}

/** Of `recipients`, those whose feeds may take the status (the insert filters). */
async function admitted(core: Core, s: FanOutStatus, recipients: Id[], authorDomain: string | null): Promise<Id[]> {
  if (recipients.length === 0) return [];
  const authors = [s.accountId, ...(s.reblogOfAccountId !== null ? [s.reblogOfAccountId] : [])];
  const now = new Date();
  const [blocking, muting, domainBlocked, replyFollowers, noReblogs] = await Promise.all([
    collection(core.db, blocks)
      .find({ accountId: { $in: recipients }, targetAccountId: { $in: authors } }, { projection: { accountId: 1 } })
      .toArray(),
    collection(core.db, mutes)
      .find({ accountId: { $in: recipients }, targetAccountId: { $in: authors } })
      .toArray(),
    authorDomain
      ? collection(core.db, accountDomainBlocks)
          .find({ accountId: { $in: recipients }, domain: authorDomain }, { projection: { accountId: 1 } })
          .toArray()
      : Promise.resolve([]),
    s.inReplyToAccountId !== null && s.inReplyToAccountId !== s.accountId
      ? collection(core.db, follows)
          .find(
            { accountId: { $in: recipients }, targetAccountId: s.inReplyToAccountId },
            { projection: { accountId: 1 } },
          )
          .toArray()
      : Promise.resolve(null),
    s.reblogOfId !== null
      ? collection(core.db, follows)
          .find(
            { accountId: { $in: recipients }, targetAccountId: s.accountId, showReblogs: false },
            { projection: { accountId: 1 } },
          )
          .toArray()
      : Promise.resolve([]),
  ]);
  const out = new Set<bigint>([
    ...blocking.map((b) => b.accountId),
    ...muting.filter((m) => m.expiresAt === null || m.expiresAt > now).map((m) => m.accountId),
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

/** Inserts a status into every feed it belongs to. */
export async function fanOutStatus(
  core: Core,
  s: FanOutStatus,
  heartbeat: () => Promise<void> = async () => {},
): Promise<FanOutResult> {
  const author = await collection(core.db, accounts).findOne({ _id: s.accountId }, { projection: { domain: 1 } });
  if (!author) return { home: [], lists: [] };
  const delivered: Id[] = [];
  const insert = async (recipients: Id[]) => {
    for (const r of await admitted(core, s, recipients, author.domain)) {
      if (await addToFeed(core.redis, feedKey('home', r), s.statusId, s.reblogOfId)) delivered.push(r);
    }
  };

  if (s.visibility === 'direct') {
    await insert(await localAmong(core, [...new Set([s.accountId, ...s.mentionedAccountIds])]));
    return { home: delivered, lists: [] };
  }
  // The author's own feed, the followers' and the lists' are independent: written concurrently,
  // so that the followers' streams get the status sooner.
  const own = author.domain === null ? insert([s.accountId]) : Promise.resolve();
  const followers = (async (): Promise<Id[]> => {
    // Local followers: inline for an ordinary account; a big one's are cut into slices that go
    // out as FanOutBatchRequested jobs, spread over partitions, so several processes share the work.
    const bounds = await followerSlices(core, s.accountId);
    if (bounds.length <= 1) return fanOutToFollowerSlice(core, s, bounds[0] ?? null, author.domain);
    await core.outbox.write(
      bounds.map((slice, i) => ({
        type: 'FanOutBatchRequested' as const,
        key: `${s.statusId}:${i}`,
        payload: {
          statusId: String(s.statusId),
          accountId: String(s.accountId),
          upToFollowId: String(slice.upTo),
          afterFollowId: String(slice.after),
        },
        verify: { collection: statuses.name, filter: { _id: s.statusId }, expect: 'exists' as const },
      })),
      async () => undefined,
    );
    return [];
  })();
  const [, reachedFollowers, lists] = await Promise.all([own, followers, fanOutToLists(core, s, author.domain)]);
  delivered.push(...reachedFollowers);
  await heartbeat();

  if (s.visibility === 'public' && s.reblogOfId === null)
    delivered.push(...(await fanOutToTagFollowers(core, s, author.domain, new Set(delivered))));
  return { home: delivered, lists };
}

/** Owners of exclusive lists that hold the author: the status goes to that list, not their home. */
async function exclusiveListOwners(core: Core, authorId: Id): Promise<Set<bigint>> {
  const memberships = await collection(core.db, listMembers).find({ accountId: authorId }).toArray();
  if (memberships.length === 0) return new Set();
  const exclusive = await collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) }, exclusive: true }, { projection: { accountId: 1 } })
    .toArray();
  return new Set(exclusive.map((l) => l.accountId));
}

async function fanOutToLists(core: Core, s: FanOutStatus, authorDomain: string | null): Promise<Id[]> {
  if (s.visibility === 'direct') return [];
  const memberships = await collection(core.db, listMembers).find({ accountId: s.accountId }).toArray();
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

async function fanOutToTagFollowers(
  core: Core,
  s: FanOutStatus,
  authorDomain: string | null,
  done: Set<bigint>,
): Promise<Id[]> {
  if (s.tagNames.length === 0) return [];
  const tagIds = (
    await collection(core.db, tags)
      .find({ nameNormalized: { $in: s.tagNames } }, { projection: { _id: 1 } })
      .toArray()
  ).map((t) => t._id);
  if (tagIds.length === 0) return [];
  const followers = [
    ...new Set(
      (
        await collection(core.db, tagFollows)
          .find({ tagId: { $in: tagIds } })
          .toArray()
      ).map((f) => f.accountId),
    ),
  ];
  const local = (await localAmong(core, followers)).filter((id) => !done.has(id));
  const reached: Id[] = [];
  for (const r of await admitted(core, { ...s, inReplyToAccountId: null }, local, authorDomain)) {
    if (await addToFeed(core.redis, feedKey('home', r), s.statusId, null)) reached.push(r);
  }
  return reached;
}

export interface FollowerSlice {
  /** Highest follow id in the slice (inclusive). */
  upTo: Id;
  /** The slice ends above this follow id (exclusive); 0n for the last one. */
  after: Id;
}

/** The author's followers cut into slices of FAN_OUT_PAGE follow records (by follow id, newest first). */
export async function followerSlices(core: Core, authorId: Id): Promise<FollowerSlice[]> {
  const ids: Id[] = [];
  let cursor: Id | null = null;
  for (;;) {
    const page = await collection(core.db, follows)
      .find(
        { targetAccountId: authorId, ...(cursor !== null ? { _id: { $lt: cursor } } : {}) },
        { projection: { _id: 1 } },
      )
      .sort({ _id: -1 })
      .limit(10_000)
      .toArray();
    ids.push(...page.map((f) => f._id));
    if (page.length < 10_000) break;
    cursor = page[page.length - 1]!._id;
  }
  const slices: FollowerSlice[] = [];
  for (let i = 0; i < ids.length; i += FAN_OUT_PAGE) {
    const next = ids[i + FAN_OUT_PAGE];
    slices.push({ upTo: ids[i]!, after: next !== undefined ? next : 0n });
  }
  return slices;
}

/** One slice of the author's local followers (all of them when `slice` is null): their home feeds. */
export async function fanOutToFollowerSlice(
  core: Core,
  s: FanOutStatus,
  slice: FollowerSlice | null,
  authorDomain: string | null,
): Promise<Id[]> {
  if (s.visibility === 'direct') return [];
  const range = slice ? { _id: { $lte: slice.upTo, $gt: slice.after } } : {};
  const page = await collection(core.db, follows)
    .find({ targetAccountId: s.accountId, ...range }, { projection: { accountId: 1 } })
    .toArray();
  const exclusive = await exclusiveListOwners(core, s.accountId);
  const local = (
    await localAmong(
      core,
      page.map((f) => f.accountId),
    )
  ).filter((id) => !exclusive.has(id));
  const recipients = await admitted(core, s, local, authorDomain);
  if (s.reblogOfId === null) {
    // The common case in one Redis round trip for the whole slice.
    await addToFeeds(
      core.redis,
      recipients.map((r) => feedKey('home', r)),
      s.statusId,
    );
    return recipients;
  }
  const reached: Id[] = [];
  for (const r of recipients) {
    if (await addToFeed(core.redis, feedKey('home', r), s.statusId, s.reblogOfId)) reached.push(r);
  }
  return reached;
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
