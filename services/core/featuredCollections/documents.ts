// Collections as ActivityPub documents (Mastodon 4.6, FEP-7aa9): the FeaturedCollection with its
// accepted FeaturedItems, the actor's `featuredCollections` list, and the FeatureAuthorization
// stamp a local featured account gives; the shapes of Mastodon's FeaturedCollectionSerializer,
// FeaturedItemSerializer and FeatureAuthorizationSerializer. Served at their ids (id-based
// `/ap/users/:account_id/...` paths, as Mastodon's).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import {
  collectionItems,
  featuredCollections,
  type CollectionItemDoc,
  type FeaturedCollectionDoc,
} from '../model/featuredCollections.ts';
import {
  collectionItemUri,
  featureAuthorizationUri,
  featuredCollectionsUri,
  featuredCollectionUri,
  tagUrl,
} from '../activitypub/uris.ts';
import { COLLECTION_CONTEXT, withContext, type JsonLd } from '../activitypub/render/context.ts';
import { DocumentUnavailable } from '../activitypub/documents.ts';

type Featured = Pick<AccountDoc, '_id' | 'uri' | 'domain' | 'bot' | 'group'>;

/** The collection's ActivityPub id: its own for a remote one, ours for a local one. */
export function collectionUriOf(core: Core, doc: Pick<FeaturedCollectionDoc, '_id' | 'accountId' | 'uri'>): string {
  return doc.uri ?? featuredCollectionUri(core.config, doc.accountId, doc._id);
}

function actorType(a: Featured): string {
  return a.group ? 'Group' : a.bot ? 'Service' : 'Person';
}

export function renderFeaturedItem(
  core: Core,
  doc: FeaturedCollectionDoc,
  item: CollectionItemDoc,
  featured: Featured,
): JsonLd {
  return {
    id: item.uri ?? collectionItemUri(core.config, doc.accountId, item._id),
    type: 'FeaturedItem',
    featuredObject: featured.uri,
    featuredObjectType: actorType(featured),
    featureAuthorization:
      featured.domain === null
        ? featureAuthorizationUri(core.config, featured._id, item._id)
        : (item.approvalUri ?? null),
  };
}

/** The FeaturedCollection (no @context) with its accepted items, in order. */
export async function renderFeaturedCollectionObject(
  core: Core,
  doc: FeaturedCollectionDoc,
  curator: Pick<AccountDoc, 'uri'>,
): Promise<JsonLd> {
  const items = await collection(core.db, collectionItems)
    .find({ collectionId: doc._id, state: 'accepted' })
    .sort({ _id: 1 })
    .toArray();
  const featured = await collection(core.db, accounts)
    .find(
      { _id: { $in: items.map((i) => i.accountId) }, suspendedAt: null },
      { projection: { uri: 1, domain: 1, bot: 1, group: 1 } },
    )
    .toArray();
  const byId = new Map(featured.map((a) => [a._id, a]));
  const shown = items.filter((i) => byId.has(i.accountId));
  const out: JsonLd = {
    id: collectionUriOf(core, doc),
    type: 'FeaturedCollection',
    totalItems: shown.length,
    name: doc.name,
    attributedTo: curator.uri,
    // Mastodon's web page of a collection; this server has none, so the id stands in.
    url: doc.url ?? collectionUriOf(core, doc),
    sensitive: doc.sensitive,
    discoverable: doc.discoverable,
    published: doc.createdAt.toISOString(),
    updated: doc.updatedAt.toISOString(),
  };
  if (doc.language) out.summaryMap = { [doc.language]: doc.description };
  else out.summary = doc.description;
  out.topic = doc.tagName ? { type: 'Hashtag', href: tagUrl(core.config, doc.tagName), name: `#${doc.tagName}` } : null;
  out.orderedItems = shown.map((i) => renderFeaturedItem(core, doc, i, byId.get(i.accountId) as Featured));
  return out;
}

/** The stamp a local featured account gives (Mastodon's FeatureAuthorizationSerializer). */
export function renderFeatureAuthorization(
  core: Core,
  featured: Pick<AccountDoc, '_id' | 'uri'>,
  itemId: Id,
  collectionUri: string,
): JsonLd {
  return {
    id: featureAuthorizationUri(core.config, featured._id, itemId),
    type: 'FeatureAuthorization',
    interactingObject: collectionUri,
    interactionTarget: featured.uri,
  };
}

const notFound = () => new DocumentUnavailable(404, 'Record not found');

/** A local, active account by id (the `/ap/users/:account_id` documents). */
async function localAccountById(core: Core, id: Id): Promise<AccountDoc> {
  const account = await collection(core.db, accounts).findOne({ _id: id, domain: null });
  if (!account || account.pendingUser) throw notFound();
  if (account.suspendedAt) throw new DocumentUnavailable(403, 'This account is suspended');
  return account;
}

async function localCollection(core: Core, accountId: Id, id: Id): Promise<FeaturedCollectionDoc> {
  const doc = await collection(core.db, featuredCollections).findOne({ _id: id, accountId, uri: null });
  if (!doc) throw notFound();
  return doc;
}

/** GET /ap/users/:account_id/featured_collections: the account's collections, embedded, newest first. */
export async function featuredCollectionsDocument(core: Core, accountId: Id): Promise<JsonLd> {
  const owner = await localAccountById(core, accountId);
  const docs = await collection(core.db, featuredCollections)
    .find({ accountId: owner._id, uri: null })
    .sort({ _id: -1 })
    .limit(50)
    .toArray();
  const items: JsonLd[] = [];
  for (const d of docs) items.push(await renderFeaturedCollectionObject(core, d, owner));
  return withContext(COLLECTION_CONTEXT, {
    id: featuredCollectionsUri(core.config, owner._id),
    type: 'OrderedCollection',
    totalItems: items.length,
    orderedItems: items,
  });
}

/** GET /ap/users/:account_id/collections/:id: one FeaturedCollection. */
export async function featuredCollectionDocument(core: Core, accountId: Id, id: Id): Promise<JsonLd> {
  const owner = await localAccountById(core, accountId);
  const doc = await localCollection(core, owner._id, id);
  return withContext(COLLECTION_CONTEXT, await renderFeaturedCollectionObject(core, doc, owner));
}

/** The accepted item `itemId` of the curator, or featuring the account, as `side` says (404 otherwise). */
async function acceptedItem(
  core: Core,
  itemId: Id,
  side: { curatorId: Id } | { accountId: Id },
): Promise<CollectionItemDoc> {
  const item = await collection(core.db, collectionItems).findOne({ _id: itemId, state: 'accepted', ...side });
  if (!item) throw notFound();
  return item;
}

/** GET /ap/users/:account_id/collection_items/:id: one accepted FeaturedItem of a local collection. */
export async function collectionItemDocument(core: Core, accountId: Id, itemId: Id): Promise<JsonLd> {
  const owner = await localAccountById(core, accountId);
  const item = await acceptedItem(core, itemId, { curatorId: owner._id });
  const doc = await localCollection(core, owner._id, item.collectionId);
  const featured = await collection(core.db, accounts).findOne({ _id: item.accountId, suspendedAt: null });
  if (!featured) throw notFound();
  return withContext(COLLECTION_CONTEXT, renderFeaturedItem(core, doc, item, featured));
}

/** GET /ap/users/:account_id/feature_authorizations/:id: the stamp of an accepted item featuring the account. */
export async function featureAuthorizationDocument(core: Core, accountId: Id, itemId: Id): Promise<JsonLd> {
  const featured = await localAccountById(core, accountId);
  const item = await acceptedItem(core, itemId, { accountId: featured._id });
  const doc = await collection(core.db, featuredCollections).findOne({ _id: item.collectionId });
  if (!doc) throw notFound();
  return withContext(
    COLLECTION_CONTEXT,
    renderFeatureAuthorization(core, featured, item._id, collectionUriOf(core, doc)),
  );
}
