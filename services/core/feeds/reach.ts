// Which feeds a status may have gone to, and which of them hold it now. The candidates: the
// author's, the mentioned accounts', local followers', followers of its hashtags' home feeds, and
// the feeds of the lists holding the author; followers a page of FAN_OUT_PAGE at a time. Edits
// (`status.update`: Mastodon pushes an edit to the streams of the timelines the status is in, and
// never inserts it anew) ask which hold it, one Redis round trip a page; deletes take it out of
// them (feeds/maintenance.ts).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { batch } from '../db/redis.ts';
import { listMembers } from '../model/lists.ts';
import { feedKey } from './feeds.ts';
import { followerPages } from './followerSlices.ts';
import { tagFollowerIds, type FanOutResult } from './fanOutWrites.ts';

async function holding(core: Core, kind: 'home' | 'list', owners: Id[], statusId: Id): Promise<Id[]> {
  if (owners.length === 0) return [];
  const pipe = batch(core.redis);
  for (const o of owners) pipe.zscore(feedKey(kind, o), String(statusId));
  const res = (await pipe.exec()) ?? [];
  return owners.filter((_, i) => res[i]?.[1] !== null && res[i]?.[1] !== undefined);
}

/** What a status reached besides its author's followers (its event carries them). */
export interface StatusReach {
  statusId: Id;
  accountId: Id;
  mentionedAccountIds: Id[];
  tagNames: string[];
}

/** The feeds `s` may have gone to, a batch of owners (accounts, or lists) at a time. */
export async function* reachCandidates(
  core: Core,
  s: Omit<StatusReach, 'statusId'>,
): AsyncGenerator<{ kind: 'home' | 'list'; owners: Id[] }> {
  yield { kind: 'home', owners: [s.accountId, ...s.mentionedAccountIds] };
  for await (const page of followerPages(core, s.accountId)) yield { kind: 'home', owners: page };
  yield { kind: 'home', owners: await tagFollowerIds(core, s.tagNames) };
  const memberships = await collection(core.db, listMembers)
    .find({ accountId: s.accountId }, { projection: { listId: 1 } })
    .toArray();
  yield { kind: 'list', owners: memberships.map((m) => m.listId) };
}

export async function feedsHolding(core: Core, s: StatusReach): Promise<FanOutResult> {
  const out: FanOutResult = { home: [], lists: [] };
  const seen = new Set<bigint>();
  for await (const { kind, owners } of reachCandidates(core, s)) {
    if (kind === 'list') {
      out.lists.push(...(await holding(core, 'list', owners, s.statusId)));
      continue;
    }
    const fresh = owners.filter((id) => !seen.has(id));
    for (const id of fresh) seen.add(id);
    out.home.push(...(await holding(core, 'home', fresh, s.statusId)));
  }
  return out;
}
