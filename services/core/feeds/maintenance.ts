// Feed upkeep outside fan-out: merging a newly followed account's recent statuses, taking an
// account's statuses out (unfollow, block, mute, list removal), removing a deleted status, and
// rebuilding a missing home feed from MongoDB (Mastodon's merge_into_home, unmerge_from_home and
// regeneration).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { follows } from '../model/follows.ts';
import { accounts } from '../model/accounts.ts';
import { listMembers, lists } from '../model/lists.ts';
import { statuses, type Visibility } from '../model/statuses.ts';
import { hiddenFrom } from '../graph/collections.ts';
import { isBlocking, isMuting } from '../graph/relations.ts';
import {
  addToFeed,
  feedExists,
  feedIds,
  feedKey,
  feedPage,
  FEED_MAX_ITEMS,
  removeFromFeed,
  removeFromFeeds,
} from './feeds.ts';
import { reachCandidates, type StatusReach } from './reach.ts';
import { activeKey, markActive } from './activity.ts';

/** Statuses merged from one account into a feed when following it (Mastodon: up to 40... per account). */
const MERGE_LIMIT = 40;

async function recentOf(core: Core, authorIds: Id[], visibility: Visibility[], limit: number) {
  return collection(core.db, statuses)
    .find(
      { accountId: { $in: authorIds }, deletedAt: null, visibility: { $in: visibility } },
      { projection: { _id: 1, reblogOfId: 1 } },
    )
    .sort({ _id: -1 })
    .limit(limit)
    .toArray();
}

/**
 * A new follow's statuses go to the home feed unless the author sits in one of the follower's
 * exclusive lists, or one of them mutes or blocks the other.
 */
export async function mergeIntoHomeFeed(core: Core, accountId: Id, authorId: Id): Promise<void> {
  // Mastodon's merge_into_home filters as the fan-out does: nothing of an author the owner mutes
  // or blocks, or who blocks the owner (the follow's event can come after a mute made since).
  const [listed, muting, blocking, blocked] = await Promise.all([
    inExclusiveLists(core, accountId, [authorId]),
    isMuting(core, accountId, authorId),
    isBlocking(core, accountId, authorId),
    isBlocking(core, authorId, accountId),
  ]);
  if (muting || blocking || blocked || listed.size > 0) return;
  await mergeIntoFeed(core, feedKey('home', accountId), authorId);
}

/**
 * Those of `authorIds` in one of `ownerId`'s exclusive lists: their statuses go to the list, not
 * the home feed (Mastodon's `exclusive_list_users` crutch).
 */
async function inExclusiveLists(core: Core, ownerId: Id, authorIds: Id[]): Promise<Set<Id>> {
  const exclusive = await collection(core.db, lists)
    .find({ accountId: ownerId, exclusive: true }, { projection: { _id: 1 } })
    .toArray();
  if (exclusive.length === 0 || authorIds.length === 0) return new Set();
  const members = await collection(core.db, listMembers)
    .find(
      { listId: { $in: exclusive.map((l) => l._id) }, accountId: { $in: authorIds } },
      { projection: { accountId: 1 } },
    )
    .toArray();
  return new Set(members.map((m) => m.accountId));
}

export async function mergeIntoFeed(core: Core, key: string, authorId: Id): Promise<void> {
  for (const s of (await recentOf(core, [authorId], ['public', 'unlisted', 'private'], MERGE_LIMIT)).reverse()) {
    await addToFeed(core.redis, key, s._id, s.reblogOfId);
  }
}

type FeedStatus = { _id: Id; accountId: Id; reblogOfId: Id | null; reblogOfAccountId: Id | null };

/** Takes the statuses of the feed that `unwanted` picks out of it (and their reblog records). */
async function unmergeWhere(
  core: Core,
  key: string,
  filter: Record<string, unknown>,
  unwanted: (inFeed: FeedStatus[]) => Promise<FeedStatus[]> | FeedStatus[] = (all) => all,
): Promise<void> {
  const ids = await feedIds(core.redis, key);
  if (ids.length === 0) return;
  const inFeed = await collection(core.db, statuses)
    .find(
      { _id: { $in: ids }, ...filter },
      { projection: { _id: 1, accountId: 1, reblogOfId: 1, reblogOfAccountId: 1 } },
    )
    .toArray();
  const theirs = await unwanted(inFeed);
  await removeFromFeed(
    core.redis,
    key,
    theirs.map((s) => s._id),
    theirs.map((s) => s.reblogOfId).filter((id): id is Id => id !== null),
  );
}

/** Takes every status by (or reblogging a status by) `authorId` out of the feed. */
export async function unmergeFromFeed(core: Core, key: string, authorId: Id): Promise<void> {
  await unmergeWhere(core, key, { $or: [{ accountId: authorId }, { reblogOfAccountId: authorId }] });
}

/** An account's home feed and its lists' feeds. */
async function ownedFeeds(core: Core, accountId: Id): Promise<string[]> {
  const owned = await collection(core.db, lists)
    .find({ accountId }, { projection: { _id: 1 } })
    .toArray();
  return [feedKey('home', accountId), ...owned.map((l) => feedKey('list', l._id))];
}

/**
 * After a block or mute: the other account's statuses (and reblogs of them) leave the home feed and
 * the lists' feeds (Mastodon's FeedManager#clear_from_home and #clear_from_lists).
 */
export async function unmergeFromOwnedFeeds(core: Core, accountId: Id, authorId: Id): Promise<void> {
  for (const key of await ownedFeeds(core, accountId)) await unmergeFromFeed(core, key, authorId);
}

/** After a domain block: statuses by that domain's accounts, or reblogs of them, leave those feeds. */
export async function unmergeDomainFromOwnedFeeds(core: Core, accountId: Id, domain: string): Promise<void> {
  for (const key of await ownedFeeds(core, accountId))
    await unmergeWhere(core, key, {}, async (inFeed) => {
      const authors = [
        ...new Set(
          inFeed.flatMap((s) => [s.accountId, ...(s.reblogOfAccountId !== null ? [s.reblogOfAccountId] : [])]),
        ),
      ];
      const onDomain = new Set(
        (
          await collection(core.db, accounts)
            .find({ _id: { $in: authors }, domain }, { projection: { _id: 1 } })
            .toArray()
        ).map((a) => a._id),
      );
      return inFeed.filter(
        (s) => onDomain.has(s.accountId) || (s.reblogOfAccountId !== null && onDomain.has(s.reblogOfAccountId)),
      );
    });
}

/**
 * A deleted status (or reblog) leaves the feeds it went to (reachCandidates: its author's, the
 * mentioned accounts', local followers', followers of its hashtags', lists'), a page of feeds per
 * Redis call. Returns the owners and lists whose feed held it (their streams hear of the deletion,
 * as Mastodon's FeedManager#unpush_from_home tells only those).
 */
export async function removeStatusFromFeeds(
  core: Core,
  s: StatusReach,
  reblogOf: Id | null,
): Promise<{ home: Id[]; lists: Id[] }> {
  const out = { home: [] as Id[], lists: [] as Id[] };
  for await (const { kind, owners } of reachCandidates(core, s)) {
    const held = await removeFromFeeds(
      core.redis,
      owners.map((o) => feedKey(kind, o)),
      s.statusId,
      reblogOf,
    );
    (kind === 'home' ? out.home : out.lists).push(...held.map((i) => owners[i]!));
  }
  return out;
}

/**
 * Rebuilds a missing home feed: the newest statuses of the account and the accounts it follows,
 * without those of accounts it blocks or mutes or keeps in an exclusive list, and without reblogs
 * from follows that hide them.
 */
export async function regenerateHomeFeed(core: Core, accountId: Id): Promise<void> {
  const followed = await collection(core.db, follows)
    .find({ accountId }, { projection: { targetAccountId: 1, showReblogs: 1 } })
    .toArray();
  const targets = followed.map((f) => f.targetAccountId);
  const [hidden, listed] = await Promise.all([
    hiddenFrom(core, { _id: accountId }, targets),
    inExclusiveLists(core, accountId, targets),
  ]);
  const authors = [accountId, ...targets.filter((id) => !hidden.has(id) && !listed.has(id))];
  const noReblogs = new Set(followed.filter((f) => !f.showReblogs).map((f) => f.targetAccountId));
  const recent = await collection(core.db, statuses)
    .find(
      { accountId: { $in: authors }, deletedAt: null, visibility: { $in: ['public', 'unlisted', 'private'] } },
      { projection: { _id: 1, accountId: 1, reblogOfId: 1, reblogOfAccountId: 1 } },
    )
    .sort({ _id: -1 })
    .limit(Math.min(FEED_MAX_ITEMS, 400))
    .toArray();
  const key = feedKey('home', accountId);
  // Oldest first, sent together: Redis runs them in order, so the reblog rules see earlier inserts.
  await Promise.all(
    recent
      .reverse()
      .filter(
        (s) =>
          s.reblogOfId === null ||
          !(noReblogs.has(s.accountId) || (s.reblogOfAccountId !== null && hidden.has(s.reblogOfAccountId))),
      )
      .map((s) => addToFeed(core.redis, key, s._id, s.reblogOfId)),
  );
}

type FeedCursor = Parameters<typeof feedPage>[2];

/**
 * A page of an account's home feed, rebuilt first when the feed cannot be trusted: its activity
 * marker says it was not kept (the user was away longer than the active window, or is new to this
 * Redis), or it is gone. The marker is set before the rebuild reads MongoDB, so what is posted
 * meanwhile is written by the fan-out and merged, not lost.
 */
export async function readHomeFeed(core: Core, accountId: Id, p: FeedCursor): Promise<Id[]> {
  const key = feedKey('home', accountId);
  const [ids, state] = await Promise.all([feedPage(core.redis, key, p), core.redis.get(activeKey(accountId))]);
  if (state === 'ok' && (ids.length > 0 || (await feedExists(core.redis, key)))) return ids;
  await markActive(core, [accountId]);
  await regenerateHomeFeed(core, accountId);
  await markActive(core, [accountId], 'ok');
  return feedPage(core.redis, key, p);
}
