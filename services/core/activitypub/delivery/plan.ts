// What each event means for other servers (federation reference §6.3): the activity, built once,
// the local account that signs it, and the inboxes it goes to. Only actions of local accounts
// are federated; remote ones arrived from their own servers.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts } from '../../model/accounts.ts';
import { type StatusDoc } from '../../model/statuses.ts';
import { reports } from '../../model/reports.ts';
import type { EventName, EventRecord } from '../../../../schemas/index.ts';
import { activityIds, statusActivityUri, localBase } from '../uris.ts';
import { renderLocalActor, renderStatusObject } from '../render/load.ts';
import { audienceFor } from '../render/note.ts';
import {
  renderAnnounce,
  renderCreate,
  renderDeleteActor,
  renderMove,
  renderDeleteStatus,
  renderFlag,
  renderLike,
  renderUndo,
  renderUpdateActor,
  renderUpdateNote,
} from '../render/activities.ts';
import {
  deliverable,
  everyKnownInbox,
  followerInboxes,
  forgetFollowerInboxes,
  inboxesOf,
  personalInboxOf,
  type Inboxes,
} from './audience.ts';
import {
  anyAccount,
  big,
  localAccount,
  personal,
  plan,
  statusById,
  statusReach,
  type DeliveryPlan,
} from './planHelpers.ts';
import { planRelation } from './planRelations.ts';
import { planFeatured } from './planFeatured.ts';
import { planCollection } from './planCollections.ts';
import { planPoll } from './planPolls.ts';

export type { DeliveryPlan } from './planHelpers.ts';

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
  'CollectionChanged',
] as const satisfies readonly EventName[];
export type PlannedEvent = (typeof PLANNED_EVENTS)[number];

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
    case 'FollowRequestCreated':
    case 'FollowCreated':
    case 'FollowAccepted':
    case 'FollowRejected':
    case 'FollowDeleted':
    case 'BlockCreated':
    case 'BlockDeleted':
      return planRelation(core, type, payload as EventRecord<typeof type>);
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
    case 'StatusUnpinned':
    case 'FeaturedTagCreated':
    case 'FeaturedTagDeleted':
      return planFeatured(core, type, payload as EventRecord<typeof type>);
    case 'CollectionChanged':
      return planCollection(core, payload as EventRecord<'CollectionChanged'>);
    case 'PollExpired':
    case 'PollUpdateRequested':
    case 'PollVoted':
      return planPoll(core, type, payload as EventRecord<typeof type>);
  }
  return [];
}
