// The ingress pipeline's work: one verified inbound activity (federation reference §6.5), dispatched
// by type. Every handler is idempotent (a redelivered activity changes nothing) and applies the
// origin rules of §8.1: objects on the actor's host, Undo/Accept/Reject/Delete only of the actor's
// own things. Local effects go through the same core operations (and so the same events) as the
// REST API, which is how fan-out, notifications and delivery see remote activity.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses } from '../../model/statuses.ts';
import { follows } from '../../model/follows.ts';
import { followRequests } from '../../model/followRequests.ts';
import { pins } from '../../model/pins.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { endFollow, unfollowAccount } from '../../graph/unfollow.ts';
import { unblockAccount } from '../../graph/block.ts';
import { unfavouriteStatus } from '../../interactions/favourites.ts';
import { removeReblog, deleteStatus } from '../../statuses/deleteStatus.ts';
import { findPoll } from '../../polls/polls.ts';
import { recordRemoteVote } from '../../polls/activitypub.ts';
import { isActorDocument, resolveActor, upsertRemoteActor } from '../actors.ts';
import { asArray, firstType, idOf, obj, parseJsonObject, str, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import { createRemoteStatus, fetchRemoteStatus, findStatusByUri, isStatusObject } from './statuses.ts';
import { deleteRemoteStatus, updateRemoteStatus } from './statusEdits.ts';
import { isFetchProblem } from '../fetchDocument.ts';
import { onQuoteRequest, onStampDeleted } from '../../quotes/ingress.ts';
import {
  onCollectionUpdated,
  onFeatureAuthorizationDeleted,
  onFeatureRequest,
} from '../../featuredCollections/ingress.ts';
import { forgetKnownKeys } from '../knownKeys.ts';
import { onFollow, onAccept, onReject } from './follows.ts';
import { reblogOfObject, onLike, onAnnounce, onBlock, onFlag, onFeatured, onMove } from './interactions.ts';
import { localAccountOf, type Ctx } from './context.ts';

export interface InboundDelivery {
  activity: string;
  signerUri: string;
  inboxAccountId: string | null;
}

const COLLECTION_TYPES = new Set(['Collection', 'OrderedCollection', 'CollectionPage', 'OrderedCollectionPage']);
/** A suspended remote actor may still withdraw things (Mastodon's allowed list). */
const ALLOWED_WHEN_SUSPENDED = new Set(['Delete', 'Reject', 'Undo', 'Update']);

/** Processes one delivery; network problems while dereferencing drop the activity (logged). */
export async function processInbound(core: Core, delivery: InboundDelivery): Promise<void> {
  const activity = parseJsonObject(delivery.activity);
  if (!activity) return;
  const actor = await resolveActor(core, delivery.signerUri);
  if (!actor || actor.domain === null) return;
  await processActivityOf(core, actor, activity, inboxAccountOf(delivery));
}

/** The personal inbox's account id; throws on a malformed record. */
export function inboxAccountOf(delivery: InboundDelivery): bigint | null {
  if (delivery.inboxAccountId === null) return null;
  if (!/^\d{1,19}$/.test(delivery.inboxAccountId)) throw new Error(`invalid inboxAccountId ${delivery.inboxAccountId}`);
  return BigInt(delivery.inboxAccountId);
}

/** The activities a delivery carries: itself, or a collection's items (oldest first, at most 100). */
export function activitiesOf(activity: JsonObject): JsonObject[] {
  return COLLECTION_TYPES.has(String(activity.type))
    ? asArray(activity.orderedItems ?? activity.items)
        .map(obj)
        .filter((i): i is JsonObject => i !== null)
        .slice(0, 100)
        .reverse()
    : [activity];
}

/** Whether a remote actor (whose domain the caller checked) may have this activity applied at all. */
export function admissible(actor: AccountDoc, activity: JsonObject): boolean {
  if ((idOf(activity.actor) ?? actor.uri) !== actor.uri) return false;
  const type = typeof activity.type === 'string' ? activity.type : '';
  return !actor.suspendedAt || ALLOWED_WHEN_SUSPENDED.has(type);
}

/** Applies a verified delivery of a resolved remote actor (the per-activity part of processInbound). */
export async function processActivityOf(
  core: Core,
  actor: AccountDoc,
  activity: JsonObject,
  inboxAccountId: bigint | null,
): Promise<void> {
  if ((await domainPolicy(core, actor.domain)).rejected) return;
  const ctx: Ctx = { core, actor, inboxAccountId };
  for (const item of activitiesOf(activity)) {
    if (!admissible(actor, item)) continue;
    try {
      await dispatch(ctx, item);
    } catch (err) {
      if (!isFetchProblem(err)) throw err;
      core.logger.info({ err, type: item.type, id: item.id }, 'ingress: dereferencing failed; activity dropped');
    }
  }
}

async function dispatch(ctx: Ctx, activity: JsonObject): Promise<void> {
  const type = typeof activity.type === 'string' ? activity.type : '';
  switch (type) {
    case 'Create':
      return onCreate(ctx, activity);
    case 'Update':
      return onUpdate(ctx, activity);
    case 'Delete':
      return onDelete(ctx, activity);
    case 'Follow':
      return onFollow(ctx, activity);
    case 'Accept':
      return onAccept(ctx, activity);
    case 'Reject':
      return onReject(ctx, activity);
    case 'Undo':
      return onUndo(ctx, activity);
    case 'Like':
      return onLike(ctx, activity);
    case 'Announce':
      return onAnnounce(ctx, activity);
    case 'Block':
      return onBlock(ctx, activity);
    case 'Flag':
      return onFlag(ctx, activity);
    case 'Add':
    case 'Remove':
      return onFeatured(ctx, activity, type);
    case 'Move':
      return onMove(ctx, activity);
    case 'FeatureRequest':
      return onFeatureRequest(ctx.core, ctx.actor, activity);
    case 'QuoteRequest':
      return onQuoteRequest(ctx.core, ctx.actor, activity, (object, uri) =>
        object
          ? createRemoteStatus(ctx.core, ctx.actor, object, { requested: true })
          : fetchRemoteStatus(ctx.core, uri),
      );
    default:
      return;
  }
}

async function onCreate(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  let object = obj(activity.object);
  const objectId = idOf(activity.object);
  if (!objectId || hostOf(objectId) !== hostOf(actor.uri)) return;
  if (object && (await isPollVote(ctx, object))) return;
  if (!object || !isStatusObject(object)) {
    // A bare reference: fetch it from its origin (the fetch proves the id).
    const status = await fetchRemoteStatus(core, objectId);
    if (status && status.accountId !== actor._id) return;
    return;
  }
  object = { ...object, id: objectId };
  await createRemoteStatus(core, actor, object, { activity, inboxAccountId: ctx.inboxAccountId });
}

/** A vote: a Note with `name` replying to one of our polls (federation reference §6.10). */
async function isPollVote(ctx: Ctx, object: JsonObject): Promise<boolean> {
  const name = str(object.name, 1000);
  const parentUri = idOf(object.inReplyTo);
  if (!name || !parentUri || object.content) return false;
  const parent = await findStatusByUri(ctx.core, parentUri);
  if (!parent || !parent.local || parent.pollId === null) return false;
  const poll = await findPoll(ctx.core, parent.pollId);
  if (!poll) return false;
  await recordRemoteVote(ctx.core, ctx.actor, poll, name, idOf(object.id));
  return true;
}

async function onUpdate(ctx: Ctx, activity: JsonObject): Promise<void> {
  const object = obj(activity.object);
  if (!object) return;
  if (isActorDocument(object)) {
    // A profile update: only the actor itself, embedded (its signature proves it).
    if (object.id !== ctx.actor.uri) return;
    await upsertRemoteActor(ctx.core, object, ctx.actor.domain ?? undefined);
    return;
  }
  if (await onCollectionUpdated(ctx.core, ctx.actor, activity)) return;
  if (isStatusObject(object)) await updateRemoteStatus(ctx.core, ctx.actor, object);
}

async function onDelete(ctx: Ctx, activity: JsonObject): Promise<void> {
  const objectId = idOf(activity.object);
  if (!objectId) return;
  if (objectId === ctx.actor.uri) return deleteRemoteAccount(ctx.core, ctx.actor);
  // FEP-044f: a deleted QuoteAuthorization revokes the quote it approved.
  if (await onStampDeleted(ctx.core, ctx.actor, objectId)) return;
  // Collections: a deleted FeatureAuthorization takes its account out of our collection.
  if (await onFeatureAuthorizationDeleted(ctx.core, ctx.actor, objectId)) return;
  await deleteRemoteStatus(ctx.core, ctx.actor, objectId);
}

/** The actor is gone: its follows both ways, statuses and pins go; the account stays as a suspended shell. */
export async function deleteRemoteAccount(core: Core, actor: AccountDoc): Promise<void> {
  for (const f of await collection(core.db, follows)
    .find({ $or: [{ accountId: actor._id }, { targetAccountId: actor._id }] })
    .toArray()) {
    const follower = { _id: f.accountId, domain: f.accountId === actor._id ? actor.domain : null };
    const followed = { _id: f.targetAccountId, domain: f.targetAccountId === actor._id ? actor.domain : null };
    await endFollow(core, follower, followed, 'REMOVED_FROM_FOLLOWERS', actor);
  }
  await collection(core.db, followRequests).deleteMany({
    $or: [{ accountId: actor._id }, { targetAccountId: actor._id }],
  });
  for (;;) {
    const batch = await collection(core.db, statuses)
      .find({ accountId: actor._id, deletedAt: null }, { projection: { _id: 1 } })
      .limit(200)
      .toArray();
    if (batch.length === 0) break;
    for (const s of batch) await deleteStatus(core, actor, s._id).catch(() => undefined);
  }
  await collection(core.db, pins).deleteMany({ accountId: actor._id });
  await collection(core.db, accounts).updateOne(
    { _id: actor._id },
    { $set: { suspendedAt: new Date(), suspensionOrigin: 'remote', updatedAt: new Date() } },
  );
  forgetKnownKeys(actor.uri);
}

// ---- Undo ---------------------------------------------------------------------------------------

async function onUndo(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  const inner = obj(activity.object);
  const innerId = idOf(activity.object);
  const type = inner ? firstType(inner) : null;
  if (inner && idOf(inner.actor) !== null && idOf(inner.actor) !== actor.uri) return;
  if (type === 'Follow' || (!inner && innerId)) {
    const target = inner ? await localAccountOf(core, idOf(inner.object)) : null;
    if (target) return unfollowAccount(core, actor, target);
    if (innerId && !inner) {
      const f =
        (await collection(core.db, follows).findOne({ accountId: actor._id, uri: innerId })) ??
        (await collection(core.db, followRequests).findOne({ accountId: actor._id, uri: innerId }));
      if (f) {
        const t = await collection(core.db, accounts).findOne({ _id: f.targetAccountId });
        if (t) return unfollowAccount(core, actor, t);
      }
      const reblog = await collection(core.db, statuses).findOne({
        uri: innerId,
        accountId: actor._id,
        deletedAt: null,
      });
      if (reblog?.reblogOfId) await removeReblog(core, reblog);
    }
    return;
  }
  if (type === 'Like') {
    const status = await findStatusByUri(core, idOf(inner?.object) ?? '');
    if (status?.local) await unfavouriteStatus(core, actor, status);
    return;
  }
  if (type === 'Announce') {
    // By the Announce's id when it has one (as Mastodon): a redelivered Undo must not take a later
    // boost of the same status. Only an Announce without id is found by its original.
    const reblog = innerId
      ? await collection(core.db, statuses).findOne({ uri: innerId, accountId: actor._id, deletedAt: null })
      : await reblogOfObject(core, actor, idOf(inner?.object));
    if (reblog?.reblogOfId) await removeReblog(core, reblog);
    return;
  }
  if (type === 'Block') {
    const target = await localAccountOf(core, idOf(inner?.object));
    if (target) await unblockAccount(core, actor, target);
  }
}
