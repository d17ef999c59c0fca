// Collection activities from other servers (Mastodon 4.6): a FeatureRequest to feature one of our
// accounts, answered by that account's policy (Accept with a FeatureAuthorization stamp, or
// Reject); the Accept/Reject of our own FeatureRequests; Add/Update/Remove of a remote curator's
// collections and their items; and the Delete of a remote account's stamp, which takes it out of
// our collection. Each handler returns whether the activity was one of these.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { collectionItems, featuredCollections, type CollectionItemDoc } from '../model/featuredCollections.ts';
import { asArray, idOf, obj, typeIs, type JsonObject } from '../activitypub/json.ts';
import { hostOf, parseLocalUri } from '../activitypub/uris.ts';
import { fetchDocument, isFetchProblem } from '../activitypub/fetchDocument.ts';
import { findAccountByUri } from '../activitypub/actors.ts';
import { blockedAmong } from '../graph/relations.ts';
import { notifyAndTell } from '../notifications/tell.ts';
import { directDelivery } from '../quotes/ingress.ts';
import { featureApprovalFor } from './featurePolicy.ts';
import { collectionEvent, renderAcceptFeatureRequest, renderRejectFeatureRequest } from './federation.ts';
import { collectionNotifications } from './notifications.ts';
import { processRemoteItem, upsertRemoteCollection } from './remote.ts';

/** FeatureRequest{object: our account, instrument: the actor's collection}. */
export async function onFeatureRequest(core: Core, actor: AccountDoc, activity: JsonObject): Promise<void> {
  const requestId = typeof activity.id === 'string' ? activity.id : null;
  if (!requestId || hostOf(requestId) !== hostOf(actor.uri)) return;
  const featuredUri = idOf(activity.object);
  const featured = featuredUri ? await findAccountByUri(core, featuredUri) : null;
  if (!featured || featured.domain !== null || featured.suspendedAt) return;
  const doc = await actorCollection(core, actor, activity.instrument);
  if (!doc) return;
  const blocked = (await blockedAmong(core, featured._id, [actor._id])).size > 0;
  if (blocked || featureApprovalFor(featured, actor._id) !== 'automatic') {
    const reject = renderRejectFeatureRequest(featured, actor, requestId);
    const verify = { collection: featuredCollections.name, filter: { _id: doc._id }, expect: 'exists' as const };
    await core.outbox.write([directDelivery(reject, featured, actor, verify)], async () => undefined);
    return;
  }
  const items = collection(core.db, collectionItems);
  let item = await items.findOne({ collectionId: doc._id, accountId: featured._id });
  if (!item) {
    item = {
      _id: await nextSerialId(core.db, 'collection_items'),
      collectionId: doc._id,
      curatorId: actor._id,
      accountId: featured._id,
      state: 'accepted',
      createdAt: new Date(),
      activityUri: requestId,
    };
    try {
      await items.insertOne(item);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  } else if (item.state !== 'accepted') {
    await items.updateOne({ _id: item._id }, { $set: { state: 'accepted', activityUri: requestId } });
  }
  const accept = renderAcceptFeatureRequest(core, featured, actor, requestId, item._id);
  const verify = { collection: collectionItems.name, filter: { _id: item._id }, expect: 'exists' as const };
  await core.outbox.write([directDelivery(accept, featured, actor, verify)], async () => undefined);
  await notifyAndTell(core, [
    { type: 'added_to_collection', accountId: featured._id, fromAccountId: actor._id, collectionId: doc._id },
  ]);
}

/** The actor's collection a reference names: known, else fetched (it must be the actor's). */
async function actorCollection(core: Core, actor: AccountDoc, ref: unknown) {
  const uri = idOf(ref);
  if (!uri || hostOf(uri) !== hostOf(actor.uri)) return null;
  const known = await collection(core.db, featuredCollections).findOne({ uri, accountId: actor._id });
  if (known) return known;
  try {
    return await upsertRemoteCollection(core, actor, await fetchDocument(core, uri));
  } catch (err) {
    if (!isFetchProblem(err)) throw err;
    core.logger.info({ err, uri }, 'collections: the collection could not be fetched');
    return null;
  }
}

/** Our pending item a FeatureRequest answer (by its id, or the request embedded) is about. */
async function ourPendingItem(core: Core, actor: AccountDoc, activity: JsonObject): Promise<CollectionItemDoc | null> {
  const inner = obj(activity.object);
  if (inner && !typeIs(inner, 'FeatureRequest')) return null;
  const requestId = idOf(activity.object);
  if (!requestId || parseLocalUri(core.config, requestId.split('#')[0]) === null) return null;
  return collection(core.db, collectionItems).findOne({ activityUri: requestId, accountId: actor._id });
}

/** Accept{FeatureRequest}: the item is accepted with the stamp, and announced to the curator's followers. */
export async function onFeatureAccepted(core: Core, actor: AccountDoc, activity: JsonObject): Promise<boolean> {
  const item = await ourPendingItem(core, actor, activity);
  if (!item) return false;
  const approvalUri = idOf(asArray(activity.result)[0]);
  if (!approvalUri || hostOf(approvalUri) !== hostOf(actor.uri) || item.state !== 'pending') return true;
  const doc = await collection(core.db, featuredCollections).findOne({ _id: item.collectionId });
  if (!doc) return true;
  await core.outbox.write([collectionEvent('item_added', doc, item)], () =>
    collection(core.db, collectionItems).updateOne({ _id: item._id }, { $set: { state: 'accepted', approvalUri } }),
  );
  return true;
}

/** Reject{FeatureRequest}: the item is refused. */
export async function onFeatureRejected(core: Core, actor: AccountDoc, activity: JsonObject): Promise<boolean> {
  const item = await ourPendingItem(core, actor, activity);
  if (!item) return false;
  if (item.state === 'pending')
    await collection(core.db, collectionItems).updateOne({ _id: item._id }, { $set: { state: 'rejected' } });
  return true;
}

/** Add/Remove with a remote curator's `featuredCollections` or one of its collections as target. */
export async function onCollectionAddRemove(
  core: Core,
  actor: AccountDoc,
  activity: JsonObject,
  kind: 'Add' | 'Remove',
): Promise<boolean> {
  const target = idOf(activity.target);
  if (!target || actor.domain === null) return false;
  const objectId = idOf(activity.object);
  if (actor.featuredCollectionsUrl && target === actor.featuredCollectionsUrl) {
    if (!objectId || hostOf(objectId) !== hostOf(actor.uri)) return true;
    if (kind === 'Remove') {
      const gone = await collection(core.db, featuredCollections).findOneAndDelete({
        uri: objectId,
        accountId: actor._id,
      });
      if (gone) await collection(core.db, collectionItems).deleteMany({ collectionId: gone._id });
      return true;
    }
    const object = obj(activity.object);
    await upsertRemoteCollection(core, actor, object && object.type ? object : await fetchDocument(core, objectId));
    return true;
  }
  const doc = await collection(core.db, featuredCollections).findOne({ uri: target, accountId: actor._id });
  if (!doc) return false;
  if (!objectId || hostOf(objectId) !== hostOf(actor.uri)) return true;
  if (kind === 'Remove') {
    await collection(core.db, collectionItems).deleteOne({ collectionId: doc._id, uri: objectId });
    return true;
  }
  const object = obj(activity.object);
  const item = await processRemoteItem(core, doc, {
    ...(object ?? (await fetchDocument(core, objectId))),
    id: objectId,
  });
  if (item?.state === 'accepted') {
    const requests = await collectionNotifications(core, {
      change: 'item_added',
      curatorId: actor._id,
      collectionId: doc._id,
      itemId: item._id,
      variant: '',
    });
    await notifyAndTell(core, requests);
  }
  return true;
}

/** Update{FeaturedCollection}: refreshed, and the local accounts it features are told. */
export async function onCollectionUpdated(core: Core, actor: AccountDoc, activity: JsonObject): Promise<boolean> {
  const object = obj(activity.object);
  if (!object || !typeIs(object, 'FeaturedCollection')) return false;
  const doc = await upsertRemoteCollection(core, actor, object);
  if (!doc) return true;
  const requests = await collectionNotifications(core, {
    change: 'updated',
    curatorId: actor._id,
    collectionId: doc._id,
    itemId: null,
    variant: typeof activity.id === 'string' ? activity.id : String(Date.now()),
  });
  await notifyAndTell(core, requests);
  return true;
}

/** Delete of a remote account's FeatureAuthorization: it leaves our collection. */
export async function onFeatureAuthorizationDeleted(core: Core, actor: AccountDoc, objectId: string): Promise<boolean> {
  if (hostOf(objectId) !== hostOf(actor.uri)) return false;
  const item = await collection(core.db, collectionItems).findOne({ approvalUri: objectId, accountId: actor._id });
  if (!item) return false;
  const doc = await collection(core.db, featuredCollections).findOne({ _id: item.collectionId });
  if (!doc || doc.uri) {
    await collection(core.db, collectionItems).deleteOne({ _id: item._id });
    return true;
  }
  await core.outbox.write([collectionEvent('item_removed', doc, item)], () =>
    collection(core.db, collectionItems).deleteOne({ _id: item._id }),
  );
  return true;
}
