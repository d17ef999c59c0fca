// Preview cards: what a link's page says about itself (OpenGraph / oEmbed), one document per URL,
// fetched by the link-previews pipeline and shown as a status's `card`.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type PreviewCardType = 'link' | 'photo' | 'video' | 'rich';

export interface PreviewCardDoc {
  _id: Id;
  url: string;
  title: string;
  description: string;
  type: PreviewCardType;
  authorName: string;
  authorUrl: string;
  providerName: string;
  providerUrl: string;
  html: string;
  width: number;
  height: number;
  image: string | null;
  embedUrl: string;
  language: string | null;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const previewCards = defineCollection<PreviewCardDoc>('preview_cards', [
  { key: { url: 1 }, name: 'url', unique: true },
]);

/** Which card a status shows (the first link's), one per status. */
export interface StatusCardDoc {
  /** The status id. */
  _id: Id;
  cardId: Id;
  createdAt: Date;
}

export const statusCards = defineCollection<StatusCardDoc>('status_cards', [{ key: { cardId: 1 }, name: 'card' }]);

/** A link publisher (the host of card URLs), reviewable as a whole (Mastodon's PreviewCardProvider). */
export interface PreviewCardProviderDoc {
  _id: Id;
  domain: string;
  createdAt: Date;
}

export const previewCardProviders = defineCollection<PreviewCardProviderDoc>('preview_card_providers', [
  { key: { domain: 1 }, name: 'domain', unique: true },
]);
