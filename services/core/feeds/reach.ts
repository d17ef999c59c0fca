// Which feeds hold a status now (for `status.update` on edits: Mastodon pushes an edit to the
// streams of the timelines the status is in, and never inserts it anew). Read-only: local
// followers, the author, mentioned accounts and followers of its hashtags whose home feed holds
// it, and the lists holding the author whose feed holds it; pages of FAN_OUT_PAGE followers, one
// Redis round trip each.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { listMembers } from '../model/lists.ts';
import { feedKey } from './feeds.ts';
import { followerPages, tagFollowerIds, type FanOutResult } from './fanOut.ts';

async function holding(core: Core, kind: 'home' | 'list', owners: Id[], statusId: Id): Promise<Id[]> {
  if (owners.length === 0) return [];
  const pipe = core.redis.pipeline();
  for (const o of owners) pipe.zscore(feedKey(kind, o), String(statusId));
  const res = (await pipe.exec()) ?? [];
  return owners.filter((_, i) => res[i]?.[1] !== null && res[i]?.[1] !== undefined);
}

export async function feedsHolding(
  core: Core,
  s: { statusId: Id; accountId: Id; mentionedAccountIds: Id[]; tagNames: string[] },
): Promise<FanOutResult> {
  const home: Id[] = [];
  const seen = new Set<bigint>();
  const check = async (ids: Id[]) => {
    const fresh = ids.filter((id) => !seen.has(id));
    for (const id of fresh) seen.add(id);
    home.push(...(await holding(core, 'home', fresh, s.statusId)));
  };
  await check([s.accountId, ...s.mentionedAccountIds]);
  for await (const page of followerPages(core, s.accountId)) await check(page);
  await check(await tagFollowerIds(core, s.tagNames));
  const memberships = await collection(core.db, listMembers)
    .find({ accountId: s.accountId }, { projection: { listId: 1 } })
    .toArray();
  const lists = await holding(
    core,
    'list',
    memberships.map((m) => m.listId),
    s.statusId,
  );
  return { home, lists };
}
