// Ending follows: unfollowing (also withdraws a pending request), removing a follower, and the
// shared step that deletes one follow with its counts and event (blocks use it too).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { follows, type FollowDoc } from '../model/follows.ts';
import { followRequests, type FollowRequestDoc } from '../model/followRequests.ts';
import type { FollowEndReason } from '../../../schemas/index.ts';
import type { NewEvent } from '../events/outbox.ts';
import { adjustFollowCounts } from './counters.ts';
import { graphPair } from './events.ts';
import { removeAccountFromOwnerLists } from '../lists/lists.ts';

type Pair = Pick<AccountDoc, '_id' | 'domain'>;

export function followDeletedEvent(
  record: FollowDoc | FollowRequestDoc,
  follower: Pair,
  followed: Pair,
  pending: boolean,
  reason: FollowEndReason,
  actor: Pair,
): NewEvent<'FollowDeleted'> {
  return {
    type: 'FollowDeleted',
    key: String(actor._id),
    payload: { followId: String(record._id), ...graphPair(follower, followed), uri: record.uri, pending, reason },
    verify: { collection: pending ? followRequests.name : follows.name, filter: { _id: record._id }, expect: 'absent' },
  };
}

/** Deletes the follow follower → followed if there is one (counts and event included). */
export async function endFollow(
  core: Core,
  follower: Pair,
  followed: Pair,
  reason: FollowEndReason,
  actor: Pair,
): Promise<boolean> {
  const follow = await collection(core.db, follows).findOne({ accountId: follower._id, targetAccountId: followed._id });
  if (!follow) return false;
  return core.outbox.write([followDeletedEvent(follow, follower, followed, false, reason, actor)], async () => {
    const res = await collection(core.db, follows).deleteOne({ _id: follow._id });
    if (res.deletedCount === 0) return false; // a concurrent call removed it and counted it
    await adjustFollowCounts(core, [follow], -1);
    await removeAccountFromOwnerLists(core, follower._id, followed._id);
    return true;
  });
}

/** Deletes the pending request follower → followed if there is one. */
export async function endFollowRequest(
  core: Core,
  follower: Pair,
  followed: Pair,
  reason: FollowEndReason,
  actor: Pair,
): Promise<boolean> {
  const request = await collection(core.db, followRequests).findOne({
    accountId: follower._id,
    targetAccountId: followed._id,
  });
  if (!request) return false;
  return core.outbox.write([followDeletedEvent(request, follower, followed, true, reason, actor)], async () => {
    const res = await collection(core.db, followRequests).deleteOne({ _id: request._id });
    return res.deletedCount > 0;
  });
}

export async function unfollowAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  await endFollow(core, account, target, 'UNFOLLOW', account);
  await endFollowRequest(core, account, target, 'REQUEST_WITHDRAWN', account);
}

/** POST /api/v1/accounts/:id/remove_from_followers: the target stops following the account. */
export async function removeFromFollowers(core: Core, account: AccountDoc, follower: AccountDoc): Promise<void> {
  await endFollow(core, follower, account, 'REMOVED_FROM_FOLLOWERS', account);
}

/** Accounts by id, for operations that only have ids. */
export async function accountsById(core: Core, ids: bigint[]): Promise<Map<bigint, AccountDoc>> {
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids } })
    .toArray();
  return new Map(found.map((a) => [a._id, a]));
}
