// The followers of a consumer batch's authors in one query: each new status's fan-out otherwise
// reads its author's first follower page alone (one MongoDB round trip per post). Only local
// authors small enough to be fanned out inline (at most FAN_OUT_PAGE followers by their counter)
// are read ahead; a page handed over is what fanOutToFollowerSlice would have read (newest
// follow first), kept under the status's key by `remembered`. Anything unexpected (a counter
// behind the follow records, too many authors) leaves the statuses to read their own page.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { readThrough } from '../db/docCache.ts';
import { accountView } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { followerPageKey, remembered, type FanOutStatus } from './authorSide.ts';
import { FAN_OUT_PAGE } from './followerSlices.ts';

/** Authors per query (the MongoDB-wire server's `$in` slows down with the square of its list). */
const MAX_AUTHORS = 250;
/** Follow records a counter may lag behind (a follow written, its counter not yet). */
const SLACK = 100;

export async function rememberFollowerPages(core: Core, batch: readonly FanOutStatus[]): Promise<void> {
  const plain = batch.filter((s) => s.visibility !== 'direct');
  if (plain.length < 2) return;
  const authorIds = [...new Set(plain.map((s) => s.accountId))];
  if (authorIds.length > MAX_AUTHORS) return;
  const authors = await readThrough(core, accountView, authorIds);
  const small = authorIds.filter((a) => {
    const doc = authors.get(a);
    return doc !== undefined && doc.domain === null && doc.followersCount <= FAN_OUT_PAGE;
  });
  if (small.length === 0) return;
  const expected = small.reduce((n, a) => n + authors.get(a)!.followersCount, 0) + SLACK;
  // Unsorted: the limit only tells whether all came back (then the order does not matter), and
  // each author's page is sorted here; a server sort over several authors' ranges cost more.
  const rows = await collection(core.db, follows)
    .find({ targetAccountId: { $in: small } }, { projection: { _id: 1, accountId: 1, targetAccountId: 1 } })
    .limit(expected + 1)
    .toArray();
  if (rows.length > expected) return;
  const byAuthor = new Map<bigint, Array<{ _id: Id; accountId: Id }>>(small.map((a) => [a, []]));
  for (const r of rows) byAuthor.get(r.targetAccountId)?.push({ _id: r._id, accountId: r.accountId });
  for (const page of byAuthor.values()) page.sort((a, b) => (a._id > b._id ? -1 : a._id < b._id ? 1 : 0));
  for (const s of plain) {
    const page = byAuthor.get(s.accountId);
    if (page && page.length <= FAN_OUT_PAGE) void remembered(core, followerPageKey(s.statusId), async () => page);
  }
}
