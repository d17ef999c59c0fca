// The Relationship entity's facts between a viewer and many accounts, in one indexed query per
// kind of record (follows, requests, blocks, mutes, domain blocks, endorsements, notes).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc, CachedAccount } from '../model/accounts.ts';
import { follows, type FollowDoc } from '../model/follows.ts';
import { followRequests, type FollowRequestDoc } from '../model/followRequests.ts';
import { blocks } from '../model/blocks.ts';
import { mutes, type MuteDoc } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { endorsements } from '../model/endorsements.ts';
import { accountNotes } from '../model/accountNotes.ts';
import { recordedAmong } from '../model/accountRecord.ts';

/** What the facts need of an account: its id and domain (the rest is not read for them). */
export type RelationshipTarget = Pick<AccountDoc, '_id' | 'domain'>;

export interface RelationshipFacts {
  id: Id;
  following: FollowDoc | null;
  requested: FollowRequestDoc | null;
  followedBy: boolean;
  requestedBy: boolean;
  blocking: boolean;
  blockedBy: boolean;
  muting: MuteDoc | null;
  domainBlocking: boolean;
  endorsed: boolean;
  note: string;
}

export async function relationshipFacts(
  core: Core,
  viewer: CachedAccount,
  targets: readonly RelationshipTarget[],
  now = new Date(),
): Promise<RelationshipFacts[]> {
  if (targets.length === 0) return [];
  const ids = targets.map((t) => t._id);
  const me = viewer._id;
  const mine = { accountId: me, targetAccountId: { $in: ids } };
  const theirs = { accountId: { $in: ids }, targetAccountId: me };
  const domains = [...new Set(targets.map((t) => t.domain).filter((d): d is string => d !== null))];
  const [
    following,
    requested,
    followedBy,
    requestedBy,
    blockingSet,
    blockedBy,
    muting,
    blockedDomains,
    endorsedSet,
    notes,
  ] = await Promise.all([
    collection(core.db, follows).find(mine).toArray(),
    collection(core.db, followRequests).find(mine).toArray(),
    collection(core.db, follows)
      .find(theirs, { projection: { accountId: 1 } })
      .toArray(),
    collection(core.db, followRequests)
      .find(theirs, { projection: { accountId: 1 } })
      .toArray(),
    recordedAmong(core.db, blocks, me, 'targetAccountId', ids),
    collection(core.db, blocks)
      .find(theirs, { projection: { accountId: 1 } })
      .toArray(),
    collection(core.db, mutes).find(mine).toArray(),
    recordedAmong(core.db, accountDomainBlocks, me, 'domain', domains),
    recordedAmong(core.db, endorsements, me, 'targetAccountId', ids),
    collection(core.db, accountNotes).find(mine).toArray(),
  ]);
  const byTarget = <T extends { targetAccountId: Id }>(list: T[]) => new Map(list.map((x) => [x.targetAccountId, x]));
  const bySource = (list: { accountId: Id }[]) => new Set(list.map((x) => x.accountId));
  const followingMap = byTarget(following);
  const requestedMap = byTarget(requested);
  const followedBySet = bySource(followedBy);
  const requestedBySet = bySource(requestedBy);
  const blockedBySet = bySource(blockedBy);
  const mutingMap = byTarget(muting.filter((m) => m.expiresAt === null || m.expiresAt > now));
  const notesMap = byTarget(notes);
  return targets.map((t) => ({
    id: t._id,
    following: followingMap.get(t._id) ?? null,
    requested: requestedMap.get(t._id) ?? null,
    followedBy: followedBySet.has(t._id),
    requestedBy: requestedBySet.has(t._id),
    blocking: blockingSet.has(t._id),
    blockedBy: blockedBySet.has(t._id),
    muting: mutingMap.get(t._id) ?? null,
    domainBlocking: t.domain !== null && blockedDomains.has(t.domain),
    endorsed: endorsedSet.has(t._id),
    note: notesMap.get(t._id)?.comment ?? '',
  }));
}
