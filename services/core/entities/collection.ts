// Collection, CollectionItem and the wrappers Mastodon 4.6 answers with (WrappedCollection,
// CollectionWithAccounts, Collections). The items are those the viewer may see
// (featuredCollections/collections.ts `visibleItems`).
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { CollectionItemDoc, FeaturedCollectionDoc } from '../model/featuredCollections.ts';
import { tagUrl } from '../statuses/urls.ts';
import { visibleItems } from '../featuredCollections/collections.ts';
import { findVisibleAccounts } from '../accounts/queries.ts';
import { presentAccounts, type Account } from './account.ts';
import { collectionUriOf } from '../featuredCollections/documents.ts';

export const CollectionItemEntity = Type.Object({
  id: Type.String(),
  account_id: Type.Union([Type.String(), Type.Null()]),
  state: Type.String(),
  created_at: Type.String(),
});

export const CollectionEntity = Type.Object({
  id: Type.String(),
  account_id: Type.String(),
  uri: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  description: Type.String(),
  language: Type.Union([Type.String(), Type.Null()]),
  local: Type.Boolean(),
  sensitive: Type.Boolean(),
  discoverable: Type.Boolean(),
  tag: Type.Union([Type.Object({ name: Type.String(), url: Type.String() }), Type.Null()]),
  item_count: Type.Integer(),
  items: Type.Array(CollectionItemEntity),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Collection = Static<typeof CollectionEntity>;

export function presentCollectionItem(item: CollectionItemDoc): Static<typeof CollectionItemEntity> {
  return {
    id: String(item._id),
    account_id: String(item.accountId),
    state: item.state,
    created_at: item.createdAt.toISOString(),
  };
}

function present(core: Core, doc: FeaturedCollectionDoc, items: CollectionItemDoc[]): Collection {
  return {
    id: String(doc._id),
    account_id: String(doc.accountId),
    uri: collectionUriOf(core, doc),
    // Mastodon's web page for it; this server has none for its own, and the field may be null.
    url: doc.url ?? null,
    name: doc.name,
    description: doc.description,
    language: doc.language,
    local: !doc.uri,
    sensitive: doc.sensitive,
    discoverable: doc.discoverable,
    tag: doc.tagName ? { name: doc.tagName, url: tagUrl(core.config, doc.tagName) } : null,
    item_count: items.length,
    items: items.map(presentCollectionItem),
    created_at: doc.createdAt.toISOString(),
    updated_at: doc.updatedAt.toISOString(),
  };
}

/** Collections as `viewer` sees them, with the accounts they name (curators first, then items). */
export async function presentCollections(
  core: Core,
  docs: readonly FeaturedCollectionDoc[],
  viewer: Pick<AccountDoc, '_id'> | null,
): Promise<{ collections: Collection[]; accountIds: Id[] }> {
  const items = await visibleItems(core, docs, viewer);
  const collections = docs.map((d) => present(core, d, items.get(d._id) ?? []));
  const accountIds = [
    ...new Set([...docs.map((d) => d.accountId), ...[...items.values()].flat().map((i) => i.accountId)]),
  ];
  return { collections, accountIds };
}

/** CollectionWithAccounts: the collection and full Account entities of its curator and items. */
export async function presentCollectionWithAccounts(
  core: Core,
  doc: FeaturedCollectionDoc,
  viewer: Pick<AccountDoc, '_id'> | null,
): Promise<{ collection: Collection; accounts: Account[] }> {
  const { collections, accountIds } = await presentCollections(core, [doc], viewer);
  return {
    collection: collections[0],
    accounts: await presentAccounts(core, await findVisibleAccounts(core, accountIds), { viewerId: viewer?._id }),
  };
}
