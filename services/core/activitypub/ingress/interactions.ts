// Inbound interactions with statuses and accounts (federation reference §6.5): Like, Announce,
// Block, Flag (reports), featured collection Add/Remove (pins) and Move.
import { onCollectionAddRemove } from '../../featuredCollections/ingress.ts';
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, reblogUniqueKey, type StatusDoc } from '../../model/statuses.ts';
import { follows } from '../../model/follows.ts';
import { pins } from '../../model/pins.ts';
import { nextSerialId } from '../../ids.ts';
import { insertOnce } from '../../db/mongo.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { createReport } from '../../moderation/reports.ts';
import { moveLocalFollowers } from '../../accounts/migration.ts';
import { blockAccount } from '../../graph/block.ts';
import { favouriteStatus } from '../../interactions/favourites.ts';
import { insertReblog } from '../../interactions/reblogs.ts';
import { resolveActor } from '../actors.ts';
import { asArray, idOf, obj, str, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import {
  createRemoteStatus,
  fetchRemoteStatus,
  findStatusByUri,
  freeStatusIds,
  isStatusObject,
  visibilityOf,
} from './statuses.ts';
import { localAccountOf, type Ctx } from './context.ts';

export async function reblogOfObject(
  core: Core,
  actor: AccountDoc,
  objectUri: string | null,
): Promise<StatusDoc | null> {
  if (!objectUri) return null;
  const original = await findStatusByUri(core, objectUri);
  if (!original) return null;
  return collection(core.db, statuses).findOne({ uniqueKey: reblogUniqueKey(actor._id, original._id) });
}

// ---- Like / Announce / Block --------------------------------------------------------------------

export async function onLike(ctx: Ctx, activity: JsonObject): Promise<void> {
  const status = await findStatusByUri(ctx.core, idOf(activity.object) ?? '');
  if (!status || !status.local || status.reblogOfId !== null) return;
  await favouriteStatus(ctx.core, ctx.actor, status).catch((err: unknown) => {
    ctx.core.logger.debug({ err }, 'ingress: Like refused');
  });
}
export async function onAnnounce(ctx: Ctx, activity: JsonObject): Promise<void> {
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
export async function onBlock(ctx: Ctx, activity: JsonObject): Promise<void> {
  const target = await localAccountOf(ctx.core, idOf(activity.object));
  if (target) await blockAccount(ctx.core, ctx.actor, target);
}

// ---- Flag / Add / Remove / Move -----------------------------------------------------------------

export async function onFlag(ctx: Ctx, activity: JsonObject): Promise<void> {
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
export async function onFeatured(ctx: Ctx, activity: JsonObject, kind: 'Add' | 'Remove'): Promise<void> {
  const { core, actor } = ctx;
  if (await onCollectionAddRemove(core, actor, activity, kind)) return;
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
  await insertOnce(collection(core.db, pins), {
    _id: await nextSerialId(core.db, 'status_pins'),
    accountId: actor._id,
    statusId: status._id,
    createdAt: new Date(),
  });
}
export async function onMove(ctx: Ctx, activity: JsonObject): Promise<void> {
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
