// Who may see and act on a status (Mastodon's StatusPolicy):
//   direct   — the author and the mentioned accounts;
//   private  — the author, followers and the mentioned accounts;
//   public / unlisted — everyone, except viewers the author blocks.
// A suspended author's statuses are visible to nobody; a reblog is visible only when its original is.
// Callers answer 404 for an invisible status, exactly as for a missing one.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { blockedAmong, blockersAmong, followedAmong } from '../graph/relations.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { recordedPairs } from '../model/accountRecord.ts';
import { recentResult } from '../db/recentResults.ts';

/** What the policy needs to know about the viewer's relations to a set of authors. */
export interface ViewerRelations {
  viewerId: Id | null;
  /** Authors the viewer follows. */
  following: Set<bigint>;
  /** Authors who block the viewer. */
  blockedBy: Set<bigint>;
  /** Authors the viewer blocks. */
  blocking: Set<bigint>;
  /** Authors whose account is unavailable (suspended or gone). */
  unavailable: Set<bigint>;
  /** Authors the viewer mutes (loaded only for quotes: Mastodon's `muted_account` state). */
  muting?: Set<bigint>;
  /** Authors on a domain the viewer blocks (loaded only for quotes: `blocked_domain`). */
  domainBlocked?: Set<bigint>;
}

/**
 * The viewer's relations to `authorIds`; `forQuotes` adds the mutes and domain blocks that only
 * the state of a quote shows (Mastodon's StatusFilter#filter_state_for_quote).
 */
export async function loadViewerRelations(
  core: Core,
  viewer: CachedAccount | null,
  authorIds: Id[],
  forQuotes = false,
): Promise<ViewerRelations> {
  const ids = [...new Set(authorIds)];
  const authors = await collection(core.db, accounts)
    .find({ _id: { $in: ids } }, { projection: { _id: 1, suspendedAt: 1, domain: 1 } })
    .toArray();
  const present = new Set(authors.filter((a) => !a.suspendedAt).map((a) => a._id));
  const unavailable = new Set(ids.filter((id) => !present.has(id)));
  if (!viewer) return { viewerId: null, following: new Set(), blockedBy: new Set(), blocking: new Set(), unavailable };
  const others = ids.filter((id) => id !== viewer._id);
  const [following, blockedBy, blocking] = await Promise.all([
    followedAmong(core, viewer._id, others),
    blockersAmong(core, others, viewer._id),
    blockedAmong(core, viewer._id, others),
  ]);
  const relations: ViewerRelations = { viewerId: viewer._id, following, blockedBy, blocking, unavailable };
  if (forQuotes && others.length > 0) {
    const domains = [...new Set(authors.map((a) => a.domain).filter((d): d is string => d !== null))];
    const [muted, blockedDomains] = await Promise.all([
      collection(core.db, mutes)
        .find(
          {
            accountId: viewer._id,
            targetAccountId: { $in: others },
            $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }],
          },
          { projection: { targetAccountId: 1 } },
        )
        .toArray(),
      domains.length > 0
        ? collection(core.db, accountDomainBlocks)
            .find({ accountId: viewer._id, domain: { $in: domains } }, { projection: { domain: 1 } })
            .toArray()
        : [],
    ]);
    const blockedSet = new Set(blockedDomains.map((b) => b.domain));
    relations.muting = new Set(muted.map((m) => m.targetAccountId));
    relations.domainBlocked = new Set(
      authors.filter((a) => a.domain !== null && blockedSet.has(a.domain)).map((a) => a._id),
    );
  }
  return relations;
}

/**
 * The relations visibleWith needs for `list` and no more, for callers that know each author's
 * availability themselves (`unavailable` stays empty; `blocking` too, which visibleWith does not
 * read): whom the viewer follows among the authors of private statuses it is neither the author
 * of nor mentioned in, and who blocks the viewer among the authors of its other statuses. A page
 * of public statuses costs one query instead of four.
 */
export async function relationsForPolicy(
  core: Core,
  viewer: CachedAccount | null,
  list: readonly PolicyFields[],
): Promise<ViewerRelations> {
  const none = { following: new Set<bigint>(), blockedBy: new Set<bigint>(), blocking: new Set<bigint>() };
  if (!viewer) return { viewerId: null, ...none, unavailable: new Set() };
  const followingAsked = new Set<bigint>();
  const blockersAsked = new Set<bigint>();
  for (const s of list) {
    if (s.accountId === viewer._id || s.deletedAt) continue;
    if (s.visibility === 'public' || s.visibility === 'unlisted') blockersAsked.add(s.accountId);
    else if (s.visibility === 'private' && !s.mentionedAccountIds.some((id) => id === viewer._id))
      followingAsked.add(s.accountId);
  }
  const [following, blockers] = await Promise.all([
    followedAmongKept(core, viewer._id, [...followingAsked]),
    blockersAsked.size > 0 ? blockersOf(core, viewer._id) : new Set<bigint>(),
  ]);
  const blockedBy = new Set([...blockersAsked].filter((id) => blockers.has(id)));
  return { viewerId: viewer._id, ...none, following, blockedBy, unavailable: new Set() };
}

/**
 * Every account that blocks `accountId` (most: none), kept in this process for a moment: pages
 * read by the same viewer in a burst ask once. A block made through this process shows at once;
 * one made by another process within BLOCKERS_TTL_MS (recentResults.ts).
 */
export async function blockersOf(core: Core, accountId: Id): Promise<Set<bigint>> {
  return recentResult(core.db, `blockers:${accountId}`, [blocks], BLOCKERS_TTL_MS, async () => {
    const found = await collection(core.db, blocks)
      .find({ targetAccountId: accountId }, { projection: { accountId: 1 } })
      .toArray();
    return new Set(found.map((b) => b.accountId));
  });
}

const BLOCKERS_TTL_MS = 2000;

/**
 * Whom `accountId` follows, kept in this process for a moment as blockersOf is (a follow or
 * unfollow through this process shows at once, another process's within FOLLOWING_TTL_MS): a
 * viewer reading profiles and public pages in a burst asks once. Only up to FOLLOWING_KEPT ids
 * are kept; `complete` says whether that is all of them.
 */
async function followingOf(core: Core, accountId: Id): Promise<{ ids: Set<bigint>; complete: boolean }> {
  return recentResult(core.db, `following:${accountId}`, [follows], FOLLOWING_TTL_MS, async () => {
    const found = await collection(core.db, follows)
      .find({ accountId }, { projection: { targetAccountId: 1 } })
      .limit(FOLLOWING_KEPT + 1)
      .toArray();
    return {
      ids: new Set(found.slice(0, FOLLOWING_KEPT).map((f) => f.targetAccountId)),
      complete: found.length <= FOLLOWING_KEPT,
    };
  });
}

const FOLLOWING_TTL_MS = 2000;
const FOLLOWING_KEPT = 2000;

/** Which of `targetIds` the account follows: from followingOf, or a query for those following more. */
export async function followedAmongKept(core: Core, accountId: Id, targetIds: Id[]): Promise<Set<bigint>> {
  if (targetIds.length === 0) return new Set();
  const kept = await followingOf(core, accountId);
  if (!kept.complete) return followedAmong(core, accountId, targetIds);
  return new Set(targetIds.filter((id) => kept.ids.has(id)));
}

/** The fields of a status the policy reads. */
export type PolicyFields = Pick<StatusDoc, 'deletedAt' | 'accountId' | 'visibility' | 'mentionedAccountIds'>;

/** The policy for one status (not a reblog wrapper: check the original separately). */
export function visibleWith(rel: ViewerRelations, status: PolicyFields): boolean {
  if (status.deletedAt) return false;
  if (rel.unavailable.has(status.accountId)) return false;
  const viewer = rel.viewerId;
  const owned = viewer !== null && viewer === status.accountId;
  const mentioned = viewer !== null && status.mentionedAccountIds.some((id) => id === viewer);
  switch (status.visibility) {
    case 'direct':
      return owned || mentioned;
    case 'private':
      return owned || mentioned || rel.following.has(status.accountId);
    default:
      return viewer === null || owned || !rel.blockedBy.has(status.accountId);
  }
}

/** Loads the originals of reblogs among `list` (id → doc). */
export async function loadReblogged(core: Core, list: StatusDoc[]): Promise<Map<bigint, StatusDoc>> {
  const ids = [...new Set(list.filter((s) => s.reblogOfId !== null).map((s) => s.reblogOfId as Id))];
  if (ids.length === 0) return new Map();
  const found = await collection(core.db, statuses)
    .find({ _id: { $in: ids } })
    .toArray();
  return new Map(found.map((s) => [s._id, s]));
}

/** The statuses of `list` the viewer may see, in order (reblogs need their original visible too). */
export async function filterVisible(core: Core, viewer: CachedAccount | null, list: StatusDoc[]): Promise<StatusDoc[]> {
  if (list.length === 0) return [];
  const originals = await loadReblogged(core, list);
  const authorIds = [...list.map((s) => s.accountId), ...[...originals.values()].map((s) => s.accountId)];
  const rel = await loadViewerRelations(core, viewer, authorIds);
  return list.filter((s) => {
    if (!visibleWith(rel, s)) return false;
    if (s.reblogOfId === null) return true;
    const original = originals.get(s.reblogOfId);
    return original !== undefined && visibleWith(rel, original);
  });
}

export async function canView(core: Core, viewer: CachedAccount | null, status: StatusDoc): Promise<boolean> {
  return (await filterVisible(core, viewer, [status])).length === 1;
}

/** The status if it exists, is not deleted and the viewer may see it; otherwise null. */
export async function findVisibleStatus(core: Core, viewer: CachedAccount | null, id: Id): Promise<StatusDoc | null> {
  const status = await collection(core.db, statuses).findOne({ _id: id, deletedAt: null });
  if (!status) return null;
  return (await canView(core, viewer, status)) ? status : null;
}

/** Mastodon's `favourite?`: visible, and the viewer does not block the author. */
export async function canFavourite(core: Core, viewer: CachedAccount, status: StatusDoc): Promise<boolean> {
  const rel = await loadViewerRelations(core, viewer, [status.accountId]);
  return visibleWith(rel, status) && !rel.blocking.has(status.accountId);
}

/** Mastodon's `reblog?`: not direct, private only by its author, visible, author not blocked. */
export async function canReblog(core: Core, viewer: CachedAccount, status: StatusDoc): Promise<boolean> {
  if (status.visibility === 'direct') return false;
  if (status.visibility === 'private' && status.accountId !== viewer._id) return false;
  return canFavourite(core, viewer, status);
}

/**
 * `canFavourite` for many viewer/status pairs (the ingress batch's Likes) in three queries: the
 * authors, the follows and the blocks among all of them; each pair is then judged by the same
 * `visibleWith` on its own relations.
 */
export async function canFavouriteEach(
  core: Core,
  pairs: Array<{ viewer: CachedAccount; status: StatusDoc }>,
): Promise<boolean[]> {
  if (pairs.length === 0) return [];
  const viewers = [...new Set(pairs.map((p) => p.viewer._id))];
  const authors = [...new Set(pairs.map((p) => p.status.accountId))];
  const both = [...new Set([...viewers, ...authors])];
  const [present, followSet, blockSet] = await Promise.all([
    collection(core.db, accounts)
      .find({ _id: { $in: authors } }, { projection: { _id: 1, suspendedAt: 1 } })
      .toArray(),
    recordedPairs(core.db, follows, viewers, 'targetAccountId', authors),
    recordedPairs(core.db, blocks, both, 'targetAccountId', both),
  ]);
  const available = new Set(present.filter((a) => !a.suspendedAt).map((a) => a._id));
  const key = (a: bigint, b: bigint) => `${a}:${b}`;
  return pairs.map(({ viewer, status }) => {
    const author = status.accountId;
    const other = author !== viewer._id;
    const rel: ViewerRelations = {
      viewerId: viewer._id,
      following: new Set(other && followSet.has(key(viewer._id, author)) ? [author] : []),
      blockedBy: new Set(other && blockSet.has(key(author, viewer._id)) ? [author] : []),
      blocking: new Set(other && blockSet.has(key(viewer._id, author)) ? [author] : []),
      unavailable: new Set(available.has(author) ? [] : [author]),
    };
    return visibleWith(rel, status) && !rel.blocking.has(author);
  });
}
