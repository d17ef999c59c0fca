// The viewer's own marks on statuses (favourited, reblogged, bookmarked, pinned, conversation
// muted), which every rendered page of statuses needs: five MongoDB queries per page, or one Redis
// SMISMEMBER against a set per viewer that holds them all (`flags:<accountId>`, members
// `f<statusId>`, `r…`, `b…`, `p…`, `m<conversationId>`, `M` when there is any `m…`, and `:` once it
// is complete).
//
// The set is filled from MongoDB on a miss and dropped by every change to those marks
// (dropViewerFlags, called by the interaction operations after their write); a drop leaves a short
// tombstone that a concurrent fill respects, so a fill that read MongoDB before the change cannot
// put the old marks back. Viewers with very many marks are not cached (the queries serve them).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { statuses, reblogUniqueKey } from '../model/statuses.ts';
import { favourites } from '../model/favourites.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { pins } from '../model/pins.ts';
import { conversationMutes } from '../model/conversations.ts';
import { recordedAmong } from '../model/accountRecord.ts';

export interface ViewerState {
  favourited: Set<bigint>;
  bookmarked: Set<bigint>;
  reblogged: Set<bigint>;
  pinned: Set<bigint>;
  mutedConversations: Set<bigint>;
}

/** More marks of one kind than this and the viewer is read from MongoDB every time. */
const MAX_CACHED_PER_KIND = 5000;
const TTL_SECONDS = 3600;
const TOMBSTONE_MS = 5000;
/** The member saying the set is complete (sets of the layout before `M` had `.`: they count as missing). */
const COMPLETE = ':';
/** The member saying the viewer has muted some conversation. */
const SOME_MUTES = 'M';

// The account id is a Redis Cluster hash tag: the set, its tombstone and its "too big" mark share
// a slot (a drop is one MULTI, a fill one script over two of them). Renamed from `flags:<id>`
// (the old sets are no longer read and expire with their TTL).
const setKey = (accountId: Id) => `flags:{${accountId}}`;
const tombKey = (accountId: Id) => `flags:{${accountId}}:t`;
const bigKey = (accountId: Id) => `flags:{${accountId}}:big`;

// KEYS: set, tombstone; ARGV: ttl, members... (SADD in chunks: Lua's stack limits unpack).
const FILL = `if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 1000 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`;

/** The viewer's marks among `statusIds` and `conversationIds`. */
export async function viewerState(
  core: Core,
  viewerId: Id,
  statusIds: Id[],
  conversationIds: Id[],
): Promise<ViewerState> {
  return (await viewerMarks(core, viewerId, statusIds))(conversationIds);
}

/**
 * The viewer's marks among `statusIds`, asked before their conversations are known (a page of
 * statuses asks while it reads them): the function returned completes them with the mutes among
 * `conversationIds`, which costs nothing more for a viewer who has muted no conversation.
 */
export async function viewerMarks(
  core: Core,
  viewerId: Id,
  statusIds: Id[],
): Promise<(conversationIds: Id[]) => Promise<ViewerState>> {
  const members = [COMPLETE, SOME_MUTES];
  for (const id of statusIds) members.push(`f${id}`, `r${id}`, `b${id}`, `p${id}`);
  const hits = await core.redis.smismember(setKey(viewerId), ...members).catch(() => null);
  if (hits && hits[0] === 1) {
    const state = emptyState();
    statusIds.forEach((id, i) => {
      if (hits[2 + 4 * i]) state.favourited.add(id);
      if (hits[3 + 4 * i]) state.reblogged.add(id);
      if (hits[4 + 4 * i]) state.bookmarked.add(id);
      if (hits[5 + 4 * i]) state.pinned.add(id);
    });
    if (hits[1] !== 1) return async () => state;
    return async (conversationIds) => {
      if (conversationIds.length === 0) return state;
      const muted = await core.redis.smismember(setKey(viewerId), ...conversationIds.map((c) => `m${c}`));
      conversationIds.forEach((id, i) => {
        if (muted[i]) state.mutedConversations.add(id);
      });
      return state;
    };
  }
  // Asked only on a miss: a page that finds the set costs one command.
  const big = await core.redis.exists(bigKey(viewerId)).catch(() => 1);
  if (big !== 1 && (await fill(core, viewerId))) return viewerMarks(core, viewerId, statusIds);
  return (conversationIds) => queryState(core, viewerId, statusIds, conversationIds);
}

/** Forgets the viewer's cached marks; call after any change to them. */
export async function dropViewerFlags(core: Core, accountId: Id): Promise<void> {
  await core.redis
    .multi()
    .set(tombKey(accountId), '1', 'PX', TOMBSTONE_MS)
    .del(setKey(accountId), bigKey(accountId))
    .exec()
    .catch(() => undefined);
}

function emptyState(): ViewerState {
  return {
    favourited: new Set(),
    bookmarked: new Set(),
    reblogged: new Set(),
    pinned: new Set(),
    mutedConversations: new Set(),
  };
}

/** Reads all of the viewer's marks and stores them; false when they are too many or a change raced. */
async function fill(core: Core, viewerId: Id): Promise<boolean> {
  const limit = MAX_CACHED_PER_KIND + 1;
  const byAccount = { accountId: viewerId };
  const [favs, marks, reblogs, pinned, muted] = await Promise.all([
    collection(core.db, favourites)
      .find(byAccount, { projection: { statusId: 1 }, limit })
      .toArray(),
    collection(core.db, bookmarks)
      .find(byAccount, { projection: { statusId: 1 }, limit })
      .toArray(),
    // Live reblogs by their unique key `r:<viewer>:<original>` (deleted ones lose it).
    collection(core.db, statuses)
      .find({ uniqueKey: { $gte: `r:${viewerId}:`, $lt: `r:${viewerId};` } }, { projection: { reblogOfId: 1 }, limit })
      .toArray(),
    collection(core.db, pins)
      .find(byAccount, { projection: { statusId: 1 }, limit })
      .toArray(),
    collection(core.db, conversationMutes)
      .find(byAccount, { projection: { conversationId: 1 }, limit })
      .toArray(),
  ]);
  if ([favs, marks, reblogs, pinned, muted].some((l) => l.length >= limit)) {
    await core.redis.set(bigKey(viewerId), '1', 'EX', TTL_SECONDS).catch(() => undefined);
    return false;
  }
  const members = [COMPLETE];
  if (muted.length > 0) members.push(SOME_MUTES);
  for (const f of favs) members.push(`f${f.statusId}`);
  for (const r of reblogs) if (r.reblogOfId !== null) members.push(`r${r.reblogOfId}`);
  for (const b of marks) members.push(`b${b.statusId}`);
  for (const p of pinned) members.push(`p${p.statusId}`);
  for (const m of muted) members.push(`m${m.conversationId}`);
  const filled = await core.redis
    .eval(FILL, 2, setKey(viewerId), tombKey(viewerId), TTL_SECONDS, ...members)
    .catch(() => 0);
  return filled === 1;
}

/** The marks straight from MongoDB, five queries limited to the statuses asked about. */
async function queryState(core: Core, viewerId: Id, ids: Id[], conversationIds: Id[]): Promise<ViewerState> {
  const [favourited, bookmarked, reblogs, pinned, mutedConversations] = await Promise.all([
    recordedAmong(core.db, favourites, viewerId, 'statusId', ids),
    recordedAmong(core.db, bookmarks, viewerId, 'statusId', ids),
    collection(core.db, statuses)
      .find({ uniqueKey: { $in: ids.map((id) => reblogUniqueKey(viewerId, id)) } }, { projection: { reblogOfId: 1 } })
      .toArray(),
    recordedAmong(core.db, pins, viewerId, 'statusId', ids),
    recordedAmong(core.db, conversationMutes, viewerId, 'conversationId', conversationIds),
  ]);
  return {
    favourited,
    bookmarked,
    reblogged: new Set(reblogs.map((r) => r.reblogOfId as Id)),
    pinned,
    mutedConversations,
  };
}
