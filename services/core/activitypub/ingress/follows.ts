// Inbound follow traffic (federation reference §6.5): Follow, and the Accept or Reject of our own
// Follow; a follow the target's settings or domain blocks refuse becomes a pending request.
import { onFeatureAccepted, onFeatureRejected } from '../../featuredCollections/ingress.ts';
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { follows } from '../../model/follows.ts';
import { followRequests, type FollowRequestDoc } from '../../model/followRequests.ts';
import { accountDomainBlocks } from '../../model/accountDomainBlocks.ts';
import { nextSerialId } from '../../ids.ts';
import { insertOnce } from '../../db/mongo.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { followAccount } from '../../graph/follow.ts';
import { authorizeFollowRequest, rejectFollowRequest } from '../../graph/followRequests.ts';
import { endFollow } from '../../graph/unfollow.ts';
import { isBlocking } from '../../graph/relations.ts';
import { idOf, obj, str, type JsonObject } from '../json.ts';
import { onQuoteAccepted, onQuoteRejected } from '../../quotes/ingress.ts';
import { localAccountOf, type Ctx } from './context.ts';

export async function onFollow(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  const target = await localAccountOf(core, idOf(activity.object));
  if (!target) return;
  const followId = str(activity.id, 2048);
  const existing = await collection(core.db, follows).findOne({ accountId: actor._id, targetAccountId: target._id });
  if (existing) {
    // Already following: the sender may be repairing its state; confirm again (Mastodon re-sends Accept).
    await collection(core.db, follows).updateOne({ _id: existing._id }, { $set: { uri: followId } });
    await core.outbox.write(
      [
        {
          type: 'FollowAccepted',
          key: String(target._id),
          payload: {
            requestId: String(existing._id),
            followId: String(existing._id),
            accountId: String(actor._id),
            accountDomain: actor.domain,
            targetAccountId: String(target._id),
            targetDomain: null,
            uri: followId,
          },
          verify: { collection: follows.name, filter: { _id: existing._id }, expect: 'exists' },
        },
      ],
      async () => undefined,
    );
    return;
  }
  const pending = await collection(core.db, followRequests).findOne({
    accountId: actor._id,
    targetAccountId: target._id,
  });
  if (pending) {
    await collection(core.db, followRequests).updateOne({ _id: pending._id }, { $set: { uri: followId } });
    return;
  }
  const refuse =
    target.suspendedAt !== null ||
    target.movedToAccountId !== null ||
    (await isBlocking(core, target._id, actor._id)) ||
    (await domainBlockedBy(core, target, actor));
  if (refuse) {
    // Recorded as a request and rejected at once, so delivery sends the Reject like any other.
    await forceRequest(core, actor, target, followId);
    await rejectFollowRequest(core, target, actor).catch(() => undefined);
    return;
  }
  const silenced = (await domainPolicy(core, actor.domain)).silenced || actor.silencedAt !== null;
  if (silenced && !target.locked) {
    await forceRequest(core, actor, target, followId);
    return;
  }
  await followAccount(core, actor, target, { activityUri: followId });
}
async function domainBlockedBy(core: Core, target: AccountDoc, actor: AccountDoc): Promise<boolean> {
  if (!actor.domain) return false;
  const n = await collection(core.db, accountDomainBlocks).countDocuments(
    { accountId: target._id, domain: actor.domain },
    { limit: 1 },
  );
  return n > 0;
}
/** A pending request regardless of the target's lock (silenced senders, refusals). */
async function forceRequest(core: Core, actor: AccountDoc, target: AccountDoc, uri: string | null): Promise<void> {
  const id = await nextSerialId(core.db, 'follow_requests');
  const request: FollowRequestDoc = {
    _id: id,
    accountId: actor._id,
    targetAccountId: target._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri,
    createdAt: new Date(),
  };
  await core.outbox.write(
    [
      {
        type: 'FollowRequestCreated',
        key: String(actor._id),
        payload: {
          requestId: String(id),
          accountId: String(actor._id),
          accountDomain: actor.domain,
          targetAccountId: String(target._id),
          targetDomain: null,
          showReblogs: true,
          notify: false,
          uri,
        },
        verify: { collection: followRequests.name, filter: { _id: id }, expect: 'exists' },
      },
    ],
    async () => {
      await insertOnce(collection(core.db, followRequests), request);
    },
  );
}
/** The local follower of an Accept/Reject: from our Follow id (`<actor>#follows/<n>`) or the embedded Follow. */
async function ourFollower(ctx: Ctx, activity: JsonObject): Promise<AccountDoc | null> {
  const object = obj(activity.object);
  const followId = idOf(activity.object);
  if (object && object.type !== undefined && object.type !== 'Follow') return null;
  if (object) {
    const target = idOf(object.object);
    if (target && target !== ctx.actor.uri) return null;
    const local = await localAccountOf(ctx.core, idOf(object.actor));
    if (local) return local;
  }
  if (followId) {
    const m = /^(.*)#follows\/(\d{1,19})$/.exec(followId);
    if (m) {
      const local = await localAccountOf(ctx.core, m[1]);
      if (local) return local;
    }
    const request = await collection(ctx.core.db, followRequests).findOne({
      targetAccountId: ctx.actor._id,
      uri: followId,
    });
    if (request) return collection(ctx.core.db, accounts).findOne({ _id: request.accountId, domain: null });
  }
  return null;
}
/** Whether the local follower's request to the sending actor is still pending. */
async function requestPending(ctx: Ctx, follower: AccountDoc): Promise<boolean> {
  const filter = { accountId: follower._id, targetAccountId: ctx.actor._id };
  return (await collection(ctx.core.db, followRequests).countDocuments(filter, { limit: 1 })) > 0;
}
export async function onAccept(ctx: Ctx, activity: JsonObject): Promise<void> {
  if (await onQuoteAccepted(ctx.core, ctx.actor, activity)) return;
  if (await onFeatureAccepted(ctx.core, ctx.actor, activity)) return;
  const follower = await ourFollower(ctx, activity);
  if (!follower || !(await requestPending(ctx, follower))) return;
  await authorizeFollowRequest(ctx.core, ctx.actor, follower).catch(() => undefined);
}
export async function onReject(ctx: Ctx, activity: JsonObject): Promise<void> {
  if (await onQuoteRejected(ctx.core, ctx.actor, activity)) return;
  if (await onFeatureRejected(ctx.core, ctx.actor, activity)) return;
  const follower = await ourFollower(ctx, activity);
  if (!follower) return;
  if (await requestPending(ctx, follower)) {
    await rejectFollowRequest(ctx.core, ctx.actor, follower).catch(() => undefined);
    return;
  }
  // Already accepted: the remote account removes us from its followers.
  await endFollow(ctx.core, follower, ctx.actor, 'REMOVED_FROM_FOLLOWERS', ctx.actor);
}
