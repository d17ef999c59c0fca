// The ingress pipeline's work: one verified inbound activity (federation reference §6.5), dispatched
// by type. Every handler is idempotent (a redelivered activity changes nothing) and applies the
// origin rules of §8.1: objects on the actor's host, Undo/Accept/Reject/Delete only of the actor's
// own things. Local effects go through the same core operations (and so the same events) as the
// REST API, which is how fan-out, notifications and delivery see remote activity.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, reblogUniqueKey, type StatusDoc } from '../../model/statuses.ts';
import { follows } from '../../model/follows.ts';
import { followRequests, type FollowRequestDoc } from '../../model/followRequests.ts';
import { pins } from '../../model/pins.ts';
import { accountDomainBlocks } from '../../model/accountDomainBlocks.ts';
import { nextSerialId } from '../../ids.ts';
import { isDuplicateKeyError } from '../../db/mongo.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { createReport } from '../../moderation/reports.ts';
import { followAccount } from '../../graph/follow.ts';
import { authorizeFollowRequest, rejectFollowRequest } from '../../graph/followRequests.ts';
import { endFollow, unfollowAccount } from '../../graph/unfollow.ts';
import { moveLocalFollowers } from '../../accounts/migration.ts';
import { blockAccount, unblockAccount } from '../../graph/block.ts';
import { isBlocking } from '../../graph/relations.ts';
import { favouriteStatus, unfavouriteStatus } from '../../interactions/favourites.ts';
import { removeReblog, deleteStatus } from '../../statuses/deleteStatus.ts';
import { insertReblog } from '../../interactions/reblogs.ts';
import { findPoll } from '../../polls/polls.ts';
import { recordRemoteVote } from '../../polls/activitypub.ts';
import { findLocalAccountByUsername } from '../../accounts/create.ts';
import { isActorDocument, resolveActor, upsertRemoteActor } from '../actors.ts';
import { asArray, firstType, idOf, obj, parseJsonObject, str, type JsonObject } from '../json.ts';
import { hostOf, parseLocalUri } from '../uris.ts';
import {
  createRemoteStatus,
  deleteRemoteStatus,
  fetchRemoteStatus,
  findStatusByUri,
  freeStatusIds,
  isStatusObject,
  updateRemoteStatus,
  visibilityOf,
} from './statuses.ts';
import { isFetchProblem } from '../fetchDocument.ts';
import { onQuoteAccepted, onQuoteRejected, onQuoteRequest, onStampDeleted } from '../../quotes/ingress.ts';
import { forgetKnownKeys } from '../knownKeys.ts';

export interface InboundDelivery {
  activity: string;
  signerUri: string;
  inboxAccountId: string | null;
}

interface Ctx {
  core: Core;
  actor: AccountDoc;
  inboxAccountId: bigint | null;
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

/** A local account named by an actor id (ours), usable as a target. */
async function localAccountOf(core: Core, uri: string | null): Promise<AccountDoc | null> {
  if (!uri) return null;
  const parsed = parseLocalUri(core.config, uri);
  if (parsed?.kind !== 'actor' && parsed?.kind !== 'profile') return null;
  const account = await findLocalAccountByUsername(core, parsed.username);
  return account && !account.pendingUser ? account : null;
}

// ---- Create / Update / Delete -------------------------------------------------------------------

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
  if (isStatusObject(object)) await updateRemoteStatus(ctx.core, ctx.actor, object);
}

async function onDelete(ctx: Ctx, activity: JsonObject): Promise<void> {
  const objectId = idOf(activity.object);
  if (!objectId) return;
  if (objectId === ctx.actor.uri) return deleteRemoteAccount(ctx.core, ctx.actor);
  // FEP-044f: a deleted QuoteAuthorization revokes the quote it approved.
  if (await onStampDeleted(ctx.core, ctx.actor, objectId)) return;
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

// ---- Follows ------------------------------------------------------------------------------------

async function onFollow(ctx: Ctx, activity: JsonObject): Promise<void> {
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
      try {
        await collection(core.db, followRequests).insertOne(request);
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
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

async function onAccept(ctx: Ctx, activity: JsonObject): Promise<void> {
  if (await onQuoteAccepted(ctx.core, ctx.actor, activity)) return;
  const follower = await ourFollower(ctx, activity);
  if (!follower) return;
  const pending = await collection(ctx.core.db, followRequests).findOne({
    accountId: follower._id,
    targetAccountId: ctx.actor._id,
  });
  if (!pending) return;
  await authorizeFollowRequest(ctx.core, ctx.actor, follower).catch(() => undefined);
}

async function onReject(ctx: Ctx, activity: JsonObject): Promise<void> {
  if (await onQuoteRejected(ctx.core, ctx.actor, activity)) return;
  const follower = await ourFollower(ctx, activity);
  if (!follower) return;
  const pending = await collection(ctx.core.db, followRequests).findOne({
    accountId: follower._id,
    targetAccountId: ctx.actor._id,
  });
  if (pending) {
    await rejectFollowRequest(ctx.core, ctx.actor, follower).catch(() => undefined);
    return;
  }
  // Already accepted: the remote account removes us from its followers.
  await endFollow(ctx.core, follower, ctx.actor, 'REMOVED_FROM_FOLLOWERS', ctx.actor);
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

async function reblogOfObject(core: Core, actor: AccountDoc, objectUri: string | null): Promise<StatusDoc | null> {
  if (!objectUri) return null;
  const original = await findStatusByUri(core, objectUri);
  if (!original) return null;
  return collection(core.db, statuses).findOne({ uniqueKey: reblogUniqueKey(actor._id, original._id) });
}

// ---- Like / Announce / Block --------------------------------------------------------------------

async function onLike(ctx: Ctx, activity: JsonObject): Promise<void> {
  const status = await findStatusByUri(ctx.core, idOf(activity.object) ?? '');
  if (!status || !status.local || status.reblogOfId !== null) return;
  await favouriteStatus(ctx.core, ctx.actor, status).catch((err: unknown) => {
    ctx.core.logger.debug({ err }, 'ingress: Like refused');
  });
}

async function onAnnounce(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  const id = str(activity.id, 2048);
  if (!id || hostOf(id) !== hostOf(actor.uri)) return;
  if (await collection(core.db, statuses).findOne({ uri: id })) return;
  const objectId = idOf(activity.object);
  if (!objectId) return;
  let original = await findStatusByUri(core, objectId);
  if (!original) {
    const embedded = obj(activity.object);
    if (embedded && isStatusObject(embedded) && idOf(embedded.attributedTo) === actor.uri)
      original = await createRemoteStatus(core, actor, embedded, { requested: true });
    else original = await fetchRemoteStatus(core, objectId);
  }
  if (!original || original.reblogOfId !== null || original.deletedAt) return;
  // Others' followers-only or direct posts cannot be boosted.
  if (original.accountId !== actor._id && original.visibility !== 'public' && original.visibility !== 'unlisted')
    return;
  const wanted =
    original.local ||
    (await collection(core.db, follows).countDocuments({ targetAccountId: actor._id }, { limit: 1 })) > 0;
  if (!wanted) return;
  const published = typeof activity.published === 'string' ? new Date(activity.published) : new Date();
  const createdAt = Number.isNaN(published.getTime()) || published.getTime() > Date.now() ? new Date() : published;
  const visibility = visibilityOf(activity, null, actor.followersUrl);
  await insertReblog(core, {
    id: (await freeStatusIds(core, [createdAt]))[0]!,
    account: actor,
    original,
    uri: id,
    visibility: visibility === 'direct' ? 'private' : visibility,
    createdAt,
  });
}

async function onBlock(ctx: Ctx, activity: JsonObject): Promise<void> {
  const target = await localAccountOf(ctx.core, idOf(activity.object));
  if (target) await blockAccount(ctx.core, ctx.actor, target);
}

// ---- Flag / Add / Remove / Move -----------------------------------------------------------------

async function onFlag(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  if ((await domainPolicy(core, actor.domain)).rejectReports) return;
  const refs = asArray(activity.object)
    .map((o) => idOf(o))
    .filter((o): o is string => o !== null)
    .slice(0, 100);
  const targets = new Map<bigint, { account: AccountDoc; statusIds: bigint[] }>();
  for (const ref of refs) {
    const account = await localAccountOf(core, ref);
    if (account) {
      if (!targets.has(account._id)) targets.set(account._id, { account, statusIds: [] });
      continue;
    }
    const status = await findStatusByUri(core, ref);
    if (!status || !status.local) continue;
    const owner = targets.get(status.accountId);
    if (owner) owner.statusIds.push(status._id);
    else {
      const account2 = await collection(core.db, accounts).findOne({ _id: status.accountId });
      if (account2) targets.set(account2._id, { account: account2, statusIds: [status._id] });
    }
  }
  const comment = [...(str(activity.content, 20_000) ?? '')].slice(0, 1000).join('');
  for (const { account, statusIds } of targets.values()) {
    await createReport(core, actor, account, {
      statusIds,
      comment,
      ruleIds: [],
      forward: false,
      forwardToDomains: [],
    }).catch((err: unknown) => core.logger.info({ err }, 'ingress: Flag not recorded'));
  }
}

async function onFeatured(ctx: Ctx, activity: JsonObject, kind: 'Add' | 'Remove'): Promise<void> {
  const { core, actor } = ctx;
  const target = idOf(activity.target);
  if (!target || !actor.featuredUrl || target !== actor.featuredUrl) return;
  const object = obj(activity.object);
  if (object && object.type === 'Hashtag') return; // featured tags of remote accounts are not kept
  const objectId = idOf(activity.object);
  if (!objectId || hostOf(objectId) !== hostOf(actor.uri)) return;
  const status =
    (await findStatusByUri(core, objectId)) ?? (kind === 'Add' ? await fetchRemoteStatus(core, objectId) : null);
  if (!status || status.accountId !== actor._id) return;
  if (kind === 'Remove') {
    await collection(core.db, pins).deleteOne({ accountId: actor._id, statusId: status._id });
    return;
  }
  try {
    await collection(core.db, pins).insertOne({
      _id: await nextSerialId(core.db, 'status_pins'),
      accountId: actor._id,
      statusId: status._id,
      createdAt: new Date(),
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
}

async function onMove(ctx: Ctx, activity: JsonObject): Promise<void> {
  const { core, actor } = ctx;
  if (idOf(activity.object) !== actor.uri) return;
  const targetUri = idOf(activity.target);
  if (!targetUri) return;
  const target = await resolveActor(core, targetUri, { refresh: true });
  if (!target || target._id === actor._id || target.suspendedAt) return;
  if (!(target.alsoKnownAs ?? []).includes(actor.uri)) return;
  // Once per move (Mastodon marks it for 7 days): the actor's Update may already have set movedTo,
  // so that field cannot tell whether the followers were moved.
  const first = await core.redis.set(`move:${actor._id}:${target._id}`, '1', 'EX', 7 * 86_400, 'NX');
  if (first !== 'OK') return;
  await collection(core.db, accounts).updateOne({ _id: actor._id }, { $set: { movedToAccountId: target._id } });
  await moveLocalFollowers(core, { ...actor, movedToAccountId: target._id }, target);
}
