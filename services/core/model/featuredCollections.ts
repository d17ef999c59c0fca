// Collections (Mastodon 4.6): curated lists of accounts a user recommends others to follow, shown
// on the profile. Named "featured collections" here so they are not confused with the followers
// and following collections of ActivityPub. Each item is one featured account with the state of
// its consent (a local discoverable account consents automatically).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface FeaturedCollectionDoc {
  _id: Id;
  /** The curator. */
  accountId: Id;
  name: string;
  description: string;
  language: string | null;
  sensitive: boolean;
  discoverable: boolean;
  /** The hashtag describing it, by its name as the curator wrote it. */
  tagName: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Remote collections: the FeaturedCollection's id (absent or null: a local collection). */
  uri?: string | null;
  /** Remote collections: its web page. */
  url?: string | null;
}

export const featuredCollections = defineCollection<FeaturedCollectionDoc>('collections', [
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { uri: 1 }, name: 'uri', sparse: true },
]);

export const COLLECTION_ITEM_STATES = ['pending', 'accepted', 'rejected', 'revoked'] as const;
export type CollectionItemState = (typeof COLLECTION_ITEM_STATES)[number];

export interface CollectionItemDoc {
  _id: Id;
  collectionId: Id;
  /** The curator (so an account's collections and items are read by index). */
  curatorId: Id;
  /** The featured account. */
  accountId: Id;
  state: CollectionItemState;
  createdAt: Date;
  /** Remote collections: the FeaturedItem's id. */
  uri?: string | null;
  /** A local collection featuring a remote account: the id of the FeatureRequest it sent. */
  activityUri?: string | null;
  /** A remote account's FeatureAuthorization stamp (from its Accept, or a remote FeaturedItem). */
  approvalUri?: string | null;
}

export const collectionItems = defineCollection<CollectionItemDoc>('collection_items', [
  { key: { collectionId: 1, accountId: 1 }, name: 'collection_account', unique: true },
  { key: { collectionId: 1, _id: 1 }, name: 'collection' },
  { key: { accountId: 1, state: 1, collectionId: -1 }, name: 'account_state' },
  { key: { activityUri: 1 }, name: 'activity_uri', sparse: true },
  { key: { approvalUri: 1 }, name: 'approval_uri', sparse: true },
]);
