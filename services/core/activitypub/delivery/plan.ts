// What each event means for other servers (federation reference §6.3): the activity, built once,
// the local account that signs it, and the inboxes it goes to. Only actions of local accounts
// are federated; remote ones arrived from their own servers.
import type { Core } from '../../context.ts';
import type { Id } from '../../ids.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { polls, pollVotes } from '../../model/polls.ts';
import { reports } from '../../model/reports.ts';
import type { EventName, EventRecord } from '../../../../schemas/index.ts';
import { activityIds, statusActivityUri, localBase } from '../uris.ts';
import { renderLocalActor, renderStatusObject } from '../render/load.ts';
import { audienceFor } from '../render/note.ts';
import type { JsonLd } from '../render/context.ts';
import {
  renderAccept,
  renderAnnounce,
  renderBlock,
  renderCreate,
  renderDeleteActor,
  renderMove,
  renderDeleteStatus,
  renderFeaturedTag,
  renderFlag,
  renderFollow,
  renderLike,
  renderPin,
  renderReject,
  renderUndo,
  renderUpdateActor,
  renderUpdateNote,
  renderVote,
} from '../render/activities.ts';
import {
  deliverable,
  everyKnownInbox,
  followerInboxes,
  forgetFollowerInboxes,
  inboxesOf,
  interactorInboxes,
  personalInboxOf,
  type Inboxes,
} from './audience.ts';

export interface DeliveryPlan {
  /** Stable id of the activity (also for activities without an `id`, such as Add/Remove). */
  activityId: string;
  activityType: string;
  activity: JsonLd;
  /** Local account that signs; null for the instance actor. */
  signerAccountId: string | null;
  inboxes: Inboxes;
}

/** The events the delivery pipeline plans from. */
export const PLANNED_EVENTS = [
  'StatusCreated',
  'StatusUpdated',
  'StatusDeleted',
  'ReblogCreated',
  'ReblogDeleted',
  'FavouriteCreated',
  'FavouriteDeleted',
  'FollowRequestCreated',
  'FollowCreated',
  'FollowAccepted',
  'FollowRejected',
  'FollowDeleted',
  'BlockCreated',
  'BlockDeleted',
  'AccountUpdated',
  'StatusPinned',
  'StatusUnpinned',
  'FeaturedTagCreated',
  'FeaturedTagDeleted',
  'PollVoted',
  'PollExpired',
  'PollUpdateRequested',
  'AccountSuspended',
  'AccountUnsuspended',
  'ReportCreated',
  'AccountDataDeleted',
] as const satisfies readonly EventName[];
export type PlannedEvent = (typeof PLANNED_EVENTS)[number];

const big = (s: string): Id => BigInt(s);

async function localAccount(core: Core, id: string): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: big(id), domain: null });
}

async function anyAccount(core: Core, id: string): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: big(id) });
}

async function statusById(core: Core, id: string | Id): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({ _id: typeof id === 'string' ? big(id) : id });
}

function plan(activityId: string, activity: JsonLd, signer: AccountDoc | null, inboxes: Inboxes): DeliveryPlan {
  return {
    activityId,
    activityType: String(activity.type),
    activity,
    signerAccountId: signer ? String(signer._id) : null,
    inboxes,
  };
}

/** One inbox: the personal inbox of a remote account. */
function personal(target: { inbox: string; account: AccountDoc }): Inboxes {
  return new Map([[target.inbox, String(target.account._id)]]);
}

/** Where a status (its Create, Update, Delete) goes: Mastodon's StatusReachFinder, simplified. */
export async function statusReach(
  core: Core,
  status: Pick<StatusDoc, '_id' | 'accountId' | 'visibility' | 'inReplyToAccountId' | 'mentionedAccountIds'>,
  withInteractors: boolean,
): Promise<Inboxes> {
  const out: Inboxes = new Map();
  if (status.visibility !== 'direct') {
    await followerInboxes(core, status.accountId, out);
    if (status.inReplyToAccountId !== null) await inboxesOf(core, [status.inReplyToAccountId], out);
  }
  await inboxesOf(core, status.mentionedAccountIds, out);
  if (withInteractors && (status.visibility === 'public' || status.visibility === 'unlisted'))
    await interactorInboxes(core, status._id, out);
  return out;
}

function followerActor(core: Core, follower: AccountDoc): string {
  void core;
  return follower.uri;
}

/** The plans of one event (none when nothing goes to other servers). */
export async function planDelivery<N extends PlannedEvent>(
  core: Core,
  type: N,
  payload: EventRecord<N>,
): Promise<DeliveryPlan[]> {
  await forgetChangedFollowers(core, type, payload);
  const plans = await planUnfiltered(core, type, payload);
  const out: DeliveryPlan[] = [];
  for (const p of plans) {
    const inboxes = await deliverable(core, p.inboxes);
    if (inboxes.size > 0) out.push({ ...p, inboxes });
  }
  return out;
}

/** A remote account started or stopped following a local one: its cached follower inboxes go. */
async function forgetChangedFollowers(core: Core, type: PlannedEvent, payload: EventRecord<PlannedEvent>) {
  if (type !== 'FollowCreated' && type !== 'FollowDeleted') return;
  const p = payload as EventRecord<'FollowCreated'>;
  if (p.accountDomain !== null && p.targetDomain === null) await forgetFollowerInboxes(core, big(p.targetAccountId));
}

async function planUnfiltered(
  core: Core,
  type: PlannedEvent,
  payload: EventRecord<PlannedEvent>,
): Promise<DeliveryPlan[]> {
  const config = core.config;
  switch (type) {
    case 'StatusCreated': {
      const p = payload as EventRecord<'StatusCreated'>;
      if (!p.local) return [];
      // Most posts of a small instance reach no other server: the reach comes from the event
      // alone, and only a status that goes somewhere is read and rendered.
      const reach = await statusReach(
        core,
        {
          _id: big(p.statusId),
          accountId: big(p.accountId),
          visibility: p.visibility as StatusDoc['visibility'],
          inReplyToAccountId: p.inReplyToAccountId === null ? null : big(p.inReplyToAccountId),
          mentionedAccountIds: p.mentionedAccountIds.map(big),
        },
        false,
      );
      if (reach.size === 0) return [];
      const status = await statusById(core, p.statusId);
      if (!status || status.deletedAt || status.reblogOfId !== null) return [];
      const author = await localAccount(core, p.accountId);
      if (!author) return [];
      const note = await renderStatusObject(core, status, author);
      const id = statusActivityUri(config, author.username, status._id);
      return [plan(id, renderCreate(note, id), author, reach)];
    }
    case 'StatusUpdated': {
      const p = payload as EventRecord<'StatusUpdated'>;
      if (!p.local) return [];
      const status = await statusById(core, p.statusId);
      if (!status || status.deletedAt) return [];
      const author = await localAccount(core, p.accountId);
      if (!author) return [];
      const note = await renderStatusObject(core, status, author);
      const activity = renderUpdateNote(note, p.editedAt);
      return [plan(String(activity.id), activity, author, await statusReach(core, status, true))];
    }
    case 'StatusDeleted': {
      const p = payload as EventRecord<'StatusDeleted'>;
      if (!p.local) return [];
      const author = await localAccount(core, p.accountId);
      if (!author) return [];
      const status = await statusById(core, p.statusId);
      const reach = status
        ? await statusReach(core, status, true)
        : await inboxesOf(
            core,
            p.mentionedAccountIds.map(big),
            p.visibility === 'direct' ? new Map() : await followerInboxes(core, author._id),
          );
      const activity = renderDeleteStatus(author.uri, p.uri);
      return [plan(String(activity.id), activity, author, reach)];
    }
    case 'ReblogCreated':
    case 'ReblogDeleted': {
      const p = payload as EventRecord<'ReblogCreated'>;
      if (!p.local) return [];
      const [booster, original, originalAuthor] = await Promise.all([
        localAccount(core, p.accountId),
        statusById(core, p.reblogOfId),
        anyAccount(core, p.reblogOfAccountId),
      ]);
      if (!booster || !original || !originalAuthor) return [];
      const announce = renderAnnounce({
        id: p.uri,
        actor: booster.uri,
        object: original.uri,
        objectAuthor: originalAuthor.uri,
        audience: audienceFor(p.visibility as StatusDoc['visibility'], booster.followersUrl, []),
        published: type === 'ReblogCreated' ? (payload as EventRecord<'ReblogCreated'>).createdAt : p.occurredAt,
      });
      const reach = await followerInboxes(core, booster._id);
      await inboxesOf(core, [originalAuthor._id], reach);
      if (type === 'ReblogCreated') return [plan(p.uri, announce, booster, reach)];
      const undo = renderUndo(activityIds.undoAnnounce(booster.uri, big(p.statusId)), booster.uri, announce);
      return [plan(String(undo.id), undo, booster, reach)];
    }
    case 'FavouriteCreated':
    case 'FavouriteDeleted': {
      const p = payload as EventRecord<'FavouriteCreated'>;
      const [actor, status, target] = await Promise.all([
        localAccount(core, p.accountId),
        statusById(core, p.statusId),
        personalInboxOf(core, big(p.statusAccountId)),
      ]);
      if (!actor || !status || !target) return [];
      const like = renderLike(activityIds.like(actor.uri, big(p.favouriteId)), actor.uri, status.uri);
      if (type === 'FavouriteCreated') return [plan(String(like.id), like, actor, personal(target))];
      const undo = renderUndo(activityIds.undoLike(actor.uri, big(p.favouriteId)), actor.uri, like);
      return [plan(String(undo.id), undo, actor, personal(target))];
    }
    case 'FollowRequestCreated': {
      const p = payload as EventRecord<'FollowRequestCreated'>;
      if (p.accountDomain !== null || p.targetDomain === null) return [];
      const [actor, target] = await Promise.all([
        localAccount(core, p.accountId),
        personalInboxOf(core, big(p.targetAccountId)),
      ]);
      if (!actor || !target) return [];
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
      const [actor, follower] = await Promise.all([
        localAccount(core, p.targetAccountId),
        personalInboxOf(core, big(p.accountId)),
      ]);
      if (!actor || !follower) return [];
      const ref = type === 'FollowAccepted' ? big(p.requestId!) : big(p.followId);
      const accept = renderAccept(activityIds.accept(actor.uri, ref), actor.uri, {
        id: p.uri,
        actor: followerActor(core, follower.account),
      });
      return [plan(String(accept.id), accept, actor, personal(follower))];
    }
    case 'FollowRejected': {
      const p = payload as EventRecord<'FollowRejected'>;
      if (p.accountDomain === null || p.targetDomain !== null) return [];
      const [actor, follower] = await Promise.all([
        localAccount(core, p.targetAccountId),
        personalInboxOf(core, big(p.accountId)),
      ]);
      if (!actor || !follower) return [];
      const reject = renderReject(activityIds.reject(actor.uri, big(p.requestId)), actor.uri, {
        id: p.uri,
        actor: follower.account.uri,
      });
      return [plan(String(reject.id), reject, actor, personal(follower))];
    }
    case 'FollowDeleted': {
      const p = payload as EventRecord<'FollowDeleted'>;
      if (p.accountDomain === null && p.targetDomain !== null) {
        // A local account stops following (or withdraws its request, or blocks): Undo Follow.
        if (p.reason === 'REMOVED_FROM_FOLLOWERS') return [];
        const [actor, target] = await Promise.all([
          localAccount(core, p.accountId),
          personalInboxOf(core, big(p.targetAccountId)),
        ]);
        if (!actor || !target) return [];
        const followId = p.uri ?? activityIds.follow(actor.uri, big(p.followId));
        const follow = renderFollow(followId, actor.uri, target.account.uri);
        const undo = renderUndo(activityIds.undoFollow(actor.uri, big(p.followId)), actor.uri, follow);
        return [plan(String(undo.id), undo, actor, personal(target))];
      }
      if (p.accountDomain !== null && p.targetDomain === null) {
        // A local account removes a remote follower (or blocks it): Reject of its Follow.
        if (p.reason !== 'REMOVED_FROM_FOLLOWERS' && p.reason !== 'BLOCK') return [];
        const [actor, follower] = await Promise.all([
          localAccount(core, p.targetAccountId),
          personalInboxOf(core, big(p.accountId)),
        ]);
        if (!actor || !follower) return [];
        const reject = renderReject(activityIds.reject(actor.uri, big(p.followId)), actor.uri, {
          id: p.uri,
          actor: follower.account.uri,
        });
        return [plan(String(reject.id), reject, actor, personal(follower))];
      }
      return [];
    }
    case 'BlockCreated':
    case 'BlockDeleted': {
      const p = payload as EventRecord<'BlockCreated'>;
      if (p.accountDomain !== null || p.targetDomain === null) return [];
      const [actor, target] = await Promise.all([
        localAccount(core, p.accountId),
        personalInboxOf(core, big(p.targetAccountId)),
      ]);
      if (!actor || !target) return [];
      const blockId = p.uri ?? activityIds.block(actor.uri, big(p.blockId));
      const block = renderBlock(blockId, actor.uri, target.account.uri);
      if (type === 'BlockCreated') return [plan(blockId, block, actor, personal(target))];
      const undo = renderUndo(activityIds.undoBlock(actor.uri, big(p.blockId)), actor.uri, block);
      return [plan(String(undo.id), undo, actor, personal(target))];
    }
    case 'AccountUpdated':
    case 'AccountSuspended':
    case 'AccountUnsuspended': {
      // Profile changes, and suspensions as Mastodon 4 federates them: Update{Person} with
      // `suspended: true` and a stripped profile; lifting it sends the full actor again, which
      // the receivers take as the suspension's end (federation reference §6.8).
      const p = payload as EventRecord<'AccountUpdated'>;
      if (p.domain !== null) return [];
      const account = await localAccount(core, p.accountId);
      if (!account) return [];
      if (type === 'AccountUnsuspended' && account.suspendedAt) return [];
      const update = renderUpdateActor(await renderLocalActor(core, account), p.occurredAt);
      // Two changes within one second (suspended, then lifted) must stay two activities.
      update.id = `${account.uri}#updates/${p.occurredAt.getTime()}`;
      const reach = await followerInboxes(core, account._id);
      const plans = [plan(String(update.id), update, account, reach)];
      // A move (settings/migration): the Move follows the Update that carries `movedTo`.
      if (type === 'AccountUpdated' && p.changed.includes('moved_to') && account.movedToAccountId !== null) {
        const target = await collection(core.db, accounts).findOne(
          { _id: account.movedToAccountId },
          { projection: { uri: 1 } },
        );
        if (target) {
          const move = renderMove(`${account.uri}#moves/${p.occurredAt.getTime()}`, account.uri, target.uri);
          plans.push(plan(String(move.id), move, account, reach));
        }
      }
      return plans;
    }
    case 'AccountDataDeleted': {
      // A local account's data is gone: Delete of the actor to every server we know, signed with
      // its key (kept on the record).
      const p = payload as EventRecord<'AccountDataDeleted'>;
      if (p.domain !== null) return [];
      const account = await localAccount(core, p.accountId);
      if (!account) return [];
      const activity = renderDeleteActor(account.uri);
      return [plan(String(activity.id), activity, account, await everyKnownInbox(core))];
    }
    case 'ReportCreated': {
      // A report a local user chose to forward: Flag from the instance actor (the reporter stays
      // anonymous) to the reported account's inbox, and to the other servers named.
      const p = payload as EventRecord<'ReportCreated'>;
      if (!p.forward || p.accountDomain !== null || p.targetDomain === null) return [];
      const target = await personalInboxOf(core, big(p.targetAccountId));
      if (!target) return [];
      const report = await collection(core.db, reports).findOne({ _id: big(p.reportId) }, { projection: { uri: 1 } });
      const id = report?.uri ?? `${localBase(config)}/reports/${p.reportId}`;
      const flag = renderFlag(config, id, p.comment, [target.account.uri, ...p.statusUris]);
      const inboxes: Inboxes = new Map([[target.account.sharedInboxUrl ?? target.inbox, null]]);
      for (const domain of p.forwardToDomains) {
        if (domain === p.targetDomain) continue;
        const other = await collection(core.db, accounts).findOne(
          { domain, suspendedAt: null },
          { projection: { inboxUrl: 1, sharedInboxUrl: 1 } },
        );
        const inbox = other?.sharedInboxUrl ?? other?.inboxUrl;
        if (inbox) inboxes.set(inbox, null);
      }
      return [plan(id, flag, null, inboxes)];
    }
    case 'StatusPinned':
    case 'StatusUnpinned': {
      const p = payload as EventRecord<'StatusPinned'>;
      const account = await localAccount(core, p.accountId);
      if (!account) return [];
      const kind = type === 'StatusPinned' ? 'Add' : 'Remove';
      const activity = renderPin(
        kind,
        account.uri,
        account.featuredUrl ?? `${account.uri}/collections/featured`,
        p.statusUri,
      );
      return [
        plan(
          `${account.uri}#${kind.toLowerCase()}/${p.eventId}`,
          activity,
          account,
          await followerInboxes(core, account._id),
        ),
      ];
    }
    case 'FeaturedTagCreated':
    case 'FeaturedTagDeleted': {
      const p = payload as EventRecord<'FeaturedTagCreated'>;
      const account = await localAccount(core, p.accountId);
      if (!account) return [];
      const kind = type === 'FeaturedTagCreated' ? 'Add' : 'Remove';
      const activity = renderFeaturedTag(
        config,
        kind,
        account.uri,
        account.featuredUrl ?? `${account.uri}/collections/featured`,
        {
          name: p.name,
          href: `${localBase(config)}/@${account.username}/tagged/${encodeURIComponent(p.name)}`,
        },
      );
      return [
        plan(
          `${account.uri}#${kind.toLowerCase()}/${p.eventId}`,
          activity,
          account,
          await followerInboxes(core, account._id),
        ),
      ];
    }
    case 'PollExpired':
    case 'PollUpdateRequested': {
      // A local poll closed, or votes changed its counts (debounced by the scheduler): the
      // Question goes to everyone who has it, voters included.
      const p = payload as EventRecord<'PollExpired'> | EventRecord<'PollUpdateRequested'>;
      if ('local' in p && !p.local) return [];
      const [status, author] = await Promise.all([statusById(core, p.statusId), localAccount(core, p.accountId)]);
      if (!status || status.deletedAt || !author) return [];
      const note = await renderStatusObject(core, status, author);
      const activity = renderUpdateNote(note, p.occurredAt);
      const reach = await statusReach(core, status, true);
      const voters = await collection(core.db, pollVotes)
        .find({ pollId: big(p.pollId) }, { projection: { accountId: 1 } })
        .limit(10_000)
        .toArray();
      await inboxesOf(
        core,
        voters.map((v) => v.accountId),
        reach,
      );
      return [plan(String(activity.id), activity, author, reach)];
    }
    case 'PollVoted': {
      const p = payload as EventRecord<'PollVoted'>;
      if (p.local) return [];
      const [voter, status, target, poll] = await Promise.all([
        localAccount(core, p.accountId),
        statusById(core, p.statusId),
        personalInboxOf(core, big(p.pollAccountId)),
        collection(core.db, polls).findOne({ _id: big(p.pollId) }),
      ]);
      if (!voter || !status || !target || !poll) return [];
      return p.choices.map((choice, i) => {
        const voteId = activityIds.vote(voter.uri, `${p.pollId}-${choice}`);
        const vote = renderVote({
          voteId,
          actor: voter.uri,
          pollUri: status.uri,
          pollAuthor: target.account.uri,
          option: p.optionTitles[i] ?? poll.options[choice],
        });
        return plan(String(vote.id), vote, voter, personal(target));
      });
    }
  }
  return [];
}
