// Collections across servers (Mastodon 4.6, FEP-7aa9): the CollectionChanged event a change
// records, the activities the delivery planner builds from it (Add/Update/Remove of a collection
// and of its items, as Mastodon's Add/Update/RemoveFeaturedCollection and Add/RemoveFeaturedItem
// serializers; Delete of a FeatureAuthorization when a local account leaves a remote collection),
// and the FeatureRequest a local collection sends to feature a remote account with its answers.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { AccountDoc } from '../model/accounts.ts';
import {
  collectionItems,
  featuredCollections,
  type CollectionItemDoc,
  type FeaturedCollectionDoc,
} from '../model/featuredCollections.ts';
import type { NewEvent, Verification } from '../events/outbox.ts';
import { AS_PUBLIC, collectionItemUri, featureAuthorizationUri, featuredCollectionsUri } from '../activitypub/uris.ts';
import { COLLECTION_CONTEXT, withContext, type JsonLd } from '../activitypub/render/context.ts';
import { directDelivery } from '../quotes/ingress.ts';
import {
  collectionUriOf,
  renderFeatureAuthorization,
  renderFeaturedCollectionObject,
  renderFeaturedItem,
} from './documents.ts';

export type CollectionChange = 'created' | 'updated' | 'deleted' | 'item_added' | 'item_removed' | 'item_revoked';

/** The event of a change, verified by the write it follows. */
export function collectionEvent(
  change: CollectionChange,
  doc: Pick<FeaturedCollectionDoc, '_id' | 'accountId' | 'uri'>,
  item?: Pick<CollectionItemDoc, '_id' | 'accountId'>,
): NewEvent<'CollectionChanged'> {
  let verify: Verification;
  if (item) {
    const filter = change === 'item_revoked' ? { _id: item._id, state: 'revoked' } : { _id: item._id };
    verify = { collection: collectionItems.name, filter, expect: change === 'item_removed' ? 'absent' : 'exists' };
  } else {
    verify = {
      collection: featuredCollections.name,
      filter: { _id: doc._id },
      expect: change === 'deleted' ? 'absent' : 'exists',
    };
  }
  return {
    type: 'CollectionChanged',
    key: String(doc.accountId),
    payload: {
      accountId: String(doc.accountId),
      collectionId: String(doc._id),
      change,
      itemId: item ? String(item._id) : null,
      itemAccountId: item ? String(item.accountId) : null,
      local: !doc.uri,
    },
    verify,
  };
}

/** Add{FeaturedCollection} to the curator's `featuredCollections`, or Update{FeaturedCollection}. */
export async function renderCollectionActivity(
  core: Core,
  kind: 'Add' | 'Update',
  doc: FeaturedCollectionDoc,
  curator: Pick<AccountDoc, '_id' | 'uri'>,
): Promise<JsonLd> {
  const object = await renderFeaturedCollectionObject(core, doc, curator);
  if (kind === 'Add')
    return withContext(COLLECTION_CONTEXT, {
      type: 'Add',
      actor: curator.uri,
      target: featuredCollectionsUri(core.config, curator._id),
      object,
    });
  return withContext(COLLECTION_CONTEXT, {
    id: `${object.id}#updates/${Math.floor(doc.updatedAt.getTime() / 1000)}`,
    type: 'Update',
    actor: curator.uri,
    to: [AS_PUBLIC],
    object,
  });
}

/** Remove of a deleted collection from the curator's `featuredCollections`. */
export function renderRemoveCollection(core: Core, curator: Pick<AccountDoc, '_id' | 'uri'>, collectionId: Id): JsonLd {
  return withContext(COLLECTION_CONTEXT, {
    type: 'Remove',
    actor: curator.uri,
    target: featuredCollectionsUri(core.config, curator._id),
    object: collectionUriOf(core, { _id: collectionId, accountId: curator._id, uri: null }),
  });
}

/** Add{FeaturedItem} to a collection. */
export function renderAddItem(
  core: Core,
  doc: FeaturedCollectionDoc,
  curator: Pick<AccountDoc, 'uri'>,
  item: CollectionItemDoc,
  featured: Pick<AccountDoc, '_id' | 'uri' | 'domain' | 'bot' | 'group'>,
): JsonLd {
  return withContext(COLLECTION_CONTEXT, {
    type: 'Add',
    actor: curator.uri,
    target: collectionUriOf(core, doc),
    object: renderFeaturedItem(core, doc, item, featured),
  });
}

/** Remove of an item (by its id) from a local collection. */
export function renderRemoveItem(
  core: Core,
  curator: Pick<AccountDoc, '_id' | 'uri'>,
  collectionId: Id,
  itemId: Id,
): JsonLd {
  return withContext(COLLECTION_CONTEXT, {
    type: 'Remove',
    actor: curator.uri,
    target: collectionUriOf(core, { _id: collectionId, accountId: curator._id, uri: null }),
    object: collectionItemUri(core.config, curator._id, itemId),
  });
}

/** Delete of a local account's stamp: it no longer consents to a remote collection featuring it. */
export function renderDeleteFeatureAuthorization(
  core: Core,
  featured: Pick<AccountDoc, '_id' | 'uri'>,
  itemId: Id,
  collectionUri: string,
): JsonLd {
  const stamp = renderFeatureAuthorization(core, featured, itemId, collectionUri);
  return withContext(COLLECTION_CONTEXT, {
    id: `${featureAuthorizationUri(core.config, featured._id, itemId)}#delete`,
    type: 'Delete',
    actor: featured.uri,
    to: [AS_PUBLIC],
    object: stamp,
  });
}

/** The id of the FeatureRequest a local collection's item sends. */
export function featureRequestUri(curator: Pick<AccountDoc, 'uri'>, itemId: Id): string {
  return `${curator.uri}#feature_requests/${itemId}`;
}

/** FeatureRequest{object: the remote account, instrument: the collection} to the account's inbox. */
export function featureRequestDelivery(
  core: Core,
  curator: Pick<AccountDoc, '_id' | 'uri'>,
  doc: FeaturedCollectionDoc,
  item: CollectionItemDoc,
  target: Pick<AccountDoc, '_id' | 'uri' | 'inboxUrl'>,
): NewEvent<'DeliveryRequested'> {
  const activity = withContext(COLLECTION_CONTEXT, {
    id: item.activityUri ?? featureRequestUri(curator, item._id),
    type: 'FeatureRequest',
    actor: curator.uri,
    object: target.uri,
    instrument: collectionUriOf(core, doc),
  });
  const verify = { collection: collectionItems.name, filter: { _id: item._id }, expect: 'exists' as const };
  return directDelivery(activity, curator, target, verify);
}

/** Accept{FeatureRequest} with the stamp as `result` (Mastodon's AcceptFeatureRequestSerializer). */
export function renderAcceptFeatureRequest(
  core: Core,
  featured: Pick<AccountDoc, '_id' | 'uri'>,
  curator: Pick<AccountDoc, 'uri'>,
  requestId: string,
  itemId: Id,
): JsonLd {
  return withContext(COLLECTION_CONTEXT, {
    id: `${featured.uri}#accepts/feature_requests/${itemId}`,
    type: 'Accept',
    actor: featured.uri,
    to: curator.uri,
    object: requestId,
    result: featureAuthorizationUri(core.config, featured._id, itemId),
  });
}

/** Reject{FeatureRequest} (Mastodon's RejectFeatureRequestSerializer). */
export function renderRejectFeatureRequest(
  featured: Pick<AccountDoc, 'uri'>,
  curator: Pick<AccountDoc, 'uri'>,
  requestId: string,
): JsonLd {
  return withContext(COLLECTION_CONTEXT, {
    id: `${featured.uri}#rejects/feature_requests/${encodeURIComponent(requestId)}`,
    type: 'Reject',
    actor: featured.uri,
    to: curator.uri,
    object: requestId,
  });
}
