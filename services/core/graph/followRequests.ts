// Answering follow requests: authorize (the request becomes a follow with the options it was sent
// with), reject, and accepting every pending one when an account unlocks.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { followRequests, type FollowRequestDoc } from '../model/followRequests.ts';
import { notFound } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { createFollow } from './follow.ts';
import { graphPair } from './events.ts';
import { accountsById } from './unfollow.ts';

async function pendingFrom(core: Core, target: AccountDoc, requesterId: bigint): Promise<FollowRequestDoc> {
  const request = await collection(core.db, followRequests).findOne({
    accountId: requesterId,
    targetAccountId: target._id,
  });
  if (!request) throw notFound();
  return request;
}

async function accept(core: Core, target: AccountDoc, requester: AccountDoc, request: FollowRequestDoc): Promise<void> {
  const accepted = (followId: bigint): NewEvent<'FollowAccepted'> => ({
    type: 'FollowAccepted',
    key: String(target._id),
    payload: {
      requestId: String(request._id),
      followId: String(followId),
      ...graphPair(requester, target),
      uri: request.uri,
    },
    verify: { collection: 'follows', filter: { _id: followId }, expect: 'exists' },
  });
  await createFollow(core, requester, target, {}, request, (follow) => [accepted(follow._id)]);
  await collection(core.db, followRequests).deleteOne({ _id: request._id });
}

export async function authorizeFollowRequest(core: Core, target: AccountDoc, requester: AccountDoc): Promise<void> {
  await accept(core, target, requester, await pendingFrom(core, target, requester._id));
}

export async function rejectFollowRequest(core: Core, target: AccountDoc, requester: AccountDoc): Promise<void> {
  const request = await pendingFrom(core, target, requester._id);
  const event: NewEvent<'FollowRejected'> = {
    type: 'FollowRejected',
    key: String(target._id),
    payload: { requestId: String(request._id), ...graphPair(requester, target), uri: request.uri },
    verify: { collection: followRequests.name, filter: { _id: request._id }, expect: 'absent' },
  };
  await core.outbox.write([event], () => collection(core.db, followRequests).deleteOne({ _id: request._id }));
}

/** An account that unlocks accepts everything pending (Mastodon's UnlockAccountWorker). */
export async function acceptAllFollowRequests(core: Core, target: AccountDoc): Promise<void> {
  for (;;) {
    const batch = await collection(core.db, followRequests)
      .find({ targetAccountId: target._id })
      .sort({ _id: 1 })
      .limit(100)
      .toArray();
    if (batch.length === 0) return;
    const requesters = await accountsById(
      core,
      batch.map((r) => r.accountId),
    );
    for (const request of batch) {
      const requester = requesters.get(request.accountId);
      if (requester) await accept(core, target, requester, request);
      else await collection(core.db, followRequests).deleteOne({ _id: request._id });
    }
  }
}

export async function followRequestsCount(core: Core, accountId: bigint): Promise<number> {
  return collection(core.db, followRequests).countDocuments({ targetAccountId: accountId });
}
