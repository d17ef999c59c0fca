// The viewer's own marks on statuses (favourited, reblogged, bookmarked, pinned, conversation
// muted), which every rendered page of statuses needs: five MongoDB queries per page, or one Redis
// HMGET against a hash per viewer that holds them all (`flags:{<accountId>}`): a field per marked
// status, its value the marks' letters (`f` favourited, `r` reblogged, `b` bookmarked, `p`
// pinned), `m<conversationId>` per muted conversation, `M` when there is any `m…`, and `:` once it
// is complete. A page of 20 asks for 22 fields (a set with a member per mark took 82 arguments,
// each encoded and answered one by one).
//
// The hash is filled from MongoDB on a miss and dropped by every change to those marks
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
/** The field saying the hash is complete. */
const COMPLETE = ':';
/** The field saying the viewer has muted some conversation. */
const SOME_MUTES = 'M';

// The account id is a Redis Cluster hash tag: the hash, its tombstone and its "too big" mark share
// a slot (a drop is one MULTI, a fill one script over two of them). The key held a set before
// (one member per mark): a reader meeting one gets a type error, counts it as a miss, and the
// fill replaces it; a process of that version does the same with a hash, and both drop the key.
const marksKey = (accountId: Id) => `flags:{${accountId}}`;
const tombKey = (accountId: Id) => `flags:{${accountId}}:t`;
const bigKey = (accountId: Id) => `flags:{${accountId}}:big`;

// KEYS: hash, tombstone; ARGV: ttl, field, value, field, value... (HSET in chunks of an even
// size, so pairs stay whole: Lua's stack limits unpack).
const FILL = `if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 1000 do
  redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
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
  const fields = [COMPLETE, SOME_MUTES];
  for (const id of statusIds) fields.push(String(id));
  const hits = await core.redis.hmget(marksKey(viewerId), ...fields).catch(() => null);
  if (hits && hits[0] !== null) {
    const state = emptyState();
    statusIds.forEach((id, i) => {
      const marks = hits[2 + i];
      if (marks === null) return;
      if (marks.includes('f')) state.favourited.add(id);
      if (marks.includes('r')) state.reblogged.add(id);
      if (marks.includes('b')) state.bookmarked.add(id);
      if (marks.includes('p')) state.pinned.add(id);
    });
    if (hits[1] === null) return async () => state;
    return async (conversationIds) => {
      if (conversationIds.length === 0) return state;
      const muted = await core.redis
        .hmget(marksKey(viewerId), ...conversationIds.map((c) => `m${c}`))
        .catch(() => null);
      // A type error (a process of the older layout refilled the key as a set): MongoDB answers.
      const mutes = muted
        ? new Set(conversationIds.filter((_c, i) => muted[i] !== null))
        : await recordedAmong(core.db, conversationMutes, viewerId, 'conversationId', conversationIds);
      for (const id of mutes) state.mutedConversations.add(id);
      return state;
    };
  }
  // Asked only on a miss: a page that finds the hash costs one command.
  const big = await core.redis.exists(bigKey(viewerId)).catch(() => 1);
  if (big !== 1 && (await fill(core, viewerId))) return viewerMarks(core, viewerId, statusIds);
  return (conversationIds) => queryState(core, viewerId, statusIds, conversationIds);
}

/** Forgets the viewer's cached marks; call after any change to them. */
export async function dropViewerFlags(core: Core, accountId: Id): Promise<void> {
  await core.redis
    .multi()
    .set(tombKey(accountId), '1', 'PX', TOMBSTONE_MS)
    .del(marksKey(accountId), bigKey(accountId))
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
  // Each marked status's letters, in the order the reader looks for them.
  const letters = new Map<string, string>();
  const mark = (id: Id, letter: string) => {
    const key = String(id);
    letters.set(key, (letters.get(key) ?? '') + letter);
  };
  for (const f of favs) mark(f.statusId, 'f');
  for (const r of reblogs) if (r.reblogOfId !== null) mark(r.reblogOfId, 'r');
  for (const b of marks) mark(b.statusId, 'b');
  for (const p of pinned) mark(p.statusId, 'p');
  const pairs = [COMPLETE, '1'];
  if (muted.length > 0) pairs.push(SOME_MUTES, '1');
  for (const [id, l] of letters) pairs.push(id, l);
  for (const m of muted) pairs.push(`m${m.conversationId}`, '1');
  const filled = await core.redis
    .eval(FILL, 2, marksKey(viewerId), tombKey(viewerId), TTL_SECONDS, ...pairs)
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
