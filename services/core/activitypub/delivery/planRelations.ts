// Follows and blocks between a local and a remote account (federation reference §6.3): Follow,
// Accept, Reject, Block and their Undo, each to the other account's inbox.
import type { Core } from '../../context.ts';
import type { EventRecord } from '../../../../schemas/index.ts';
import { activityIds } from '../uris.ts';
import { renderAccept, renderBlock, renderFollow, renderReject, renderUndo } from '../render/activities.ts';
import { personalInboxOf } from './audience.ts';
import { big, localAccount, personal, plan, type DeliveryPlan } from './planHelpers.ts';

export type RelationEvent =
  | 'FollowRequestCreated'
  | 'FollowCreated'
  | 'FollowAccepted'
  | 'FollowRejected'
  | 'FollowDeleted'
  | 'BlockCreated'
  | 'BlockDeleted';

/** The local sender and the remote recipient of an activity between two accounts; null when one is gone. */
async function between(core: Core, localId: string, remoteId: string) {
  const [actor, to] = await Promise.all([localAccount(core, localId), personalInboxOf(core, big(remoteId))]);
  return actor && to ? { actor, to } : null;
}

/** The Reject of a remote account's Follow (`ref`: its request or follow) by the local account it followed. */
async function rejectFollow(
  core: Core,
  p: { accountId: string; targetAccountId: string; uri: string | null },
  ref: string,
): Promise<DeliveryPlan[]> {
  const ends = await between(core, p.targetAccountId, p.accountId);
  if (!ends) return [];
  const { actor, to } = ends;
  const reject = renderReject(activityIds.reject(actor.uri, big(ref)), actor.uri, { id: p.uri, actor: to.account.uri });
  return [plan(String(reject.id), reject, actor, personal(to))];
}

export async function planRelation(
  core: Core,
  type: RelationEvent,
  payload: EventRecord<RelationEvent>,
): Promise<DeliveryPlan[]> {
  switch (type) {
    case 'FollowRequestCreated': {
      const p = payload as EventRecord<'FollowRequestCreated'>;
      if (p.accountDomain !== null || p.targetDomain === null) return [];
      const ends = await between(core, p.accountId, p.targetAccountId);
      if (!ends) return [];
      const { actor, to: target } = ends;
      const id = p.uri ?? activityIds.follow(actor.uri, big(p.requestId));
      return [plan(id, renderFollow(id, actor.uri, target.account.uri), actor, personal(target))];
    }
    case 'FollowCreated':
    case 'FollowAccepted': {
      // A remote account's follow of a local one is in place: auto-accepted (FollowCreated not
      // from a request) or authorized (FollowAccepted). Either way the follower gets Accept.
      const p = payload as EventRecord<'FollowCreated'> & Partial<EventRecord<'FollowAccepted'>>;
      if (p.accountDomain === null || p.targetDomain !== null) return [];
      if (type === 'FollowCreated' && (payload as EventRecord<'FollowCreated'>).fromRequest) return [];
      const ends = await between(core, p.targetAccountId, p.accountId);
      if (!ends) return [];
      const { actor, to: follower } = ends;
      const ref = type === 'FollowAccepted' ? big(p.requestId!) : big(p.followId);
      const accept = renderAccept(activityIds.accept(actor.uri, ref), actor.uri, {
        id: p.uri,
        actor: follower.account.uri,
      });
      return [plan(String(accept.id), accept, actor, personal(follower))];
    }
    case 'FollowRejected': {
      const p = payload as EventRecord<'FollowRejected'>;
      if (p.accountDomain === null || p.targetDomain !== null) return [];
      return rejectFollow(core, p, p.requestId);
    }
    case 'FollowDeleted': {
      const p = payload as EventRecord<'FollowDeleted'>;
      if (p.accountDomain === null && p.targetDomain !== null) {
        // A local account stops following (or withdraws its request, or blocks): Undo Follow.
        if (p.reason === 'REMOVED_FROM_FOLLOWERS') return [];
        const ends = await between(core, p.accountId, p.targetAccountId);
        if (!ends) return [];
        const { actor, to: target } = ends;
        const followId = p.uri ?? activityIds.follow(actor.uri, big(p.followId));
        const follow = renderFollow(followId, actor.uri, target.account.uri);
        const undo = renderUndo(activityIds.undoFollow(actor.uri, big(p.followId)), actor.uri, follow);
        return [plan(String(undo.id), undo, actor, personal(target))];
      }
      if (p.accountDomain !== null && p.targetDomain === null) {
        // A local account removes a remote follower (or blocks it): Reject of its Follow.
        if (p.reason !== 'REMOVED_FROM_FOLLOWERS' && p.reason !== 'BLOCK') return [];
        return rejectFollow(core, p, p.followId);
      }
      return [];
    }
    case 'BlockCreated':
    case 'BlockDeleted': {
      const p = payload as EventRecord<'BlockCreated'>;
      if (p.accountDomain !== null || p.targetDomain === null) return [];
      const ends = await between(core, p.accountId, p.targetAccountId);
      if (!ends) return [];
      const { actor, to: target } = ends;
      const blockId = p.uri ?? activityIds.block(actor.uri, big(p.blockId));
      const block = renderBlock(blockId, actor.uri, target.account.uri);
      if (type === 'BlockCreated') return [plan(blockId, block, actor, personal(target))];
      const undo = renderUndo(activityIds.undoBlock(actor.uri, big(p.blockId)), actor.uri, block);
      return [plan(String(undo.id), undo, actor, personal(target))];
    }
  }
  return [];
}
