// PreviewCard entity (mastodon-api-entities.md: PreviewCard) and Trends::Link (a card with its
// 7-day history).
import { Type, type Static } from '@sinclair/typebox';
import type { PreviewCardDoc } from '../model/previewCards.ts';
import type { DayCount } from '../trends/counters.ts';
import { TagHistoryEntity } from './tag.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

const cardProperties = {
  url: Type.String(),
  title: Type.String(),
  description: Type.String(),
  type: Type.String(),
  author_name: Type.String(),
  author_url: Type.String(),
  provider_name: Type.String(),
  provider_url: Type.String(),
  html: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  image: NullableString,
  image_description: Type.String(),
  embed_url: Type.String(),
  blurhash: NullableString,
  language: NullableString,
  published_at: NullableString,
  authors: Type.Array(Type.Object({ name: Type.String(), url: Type.String(), account: Type.Null() })),
};

export const PreviewCardEntity = Type.Object(cardProperties);
export type PreviewCard = Static<typeof PreviewCardEntity>;

export const TrendsLinkEntity = Type.Object({ ...cardProperties, history: Type.Array(TagHistoryEntity) });
export type TrendsLink = Static<typeof TrendsLinkEntity>;

export function presentPreviewCard(card: PreviewCardDoc): PreviewCard {
  return {
    url: card.url,
    title: card.title,
    description: card.description,
    type: card.type,
    author_name: card.authorName,
    author_url: card.authorUrl,
    provider_name: card.providerName,
    provider_url: card.providerUrl,
    html: card.html,
    width: card.width,
    height: card.height,
    image: card.image,
    image_description: '',
    embed_url: card.embedUrl,
    blurhash: null,
    language: card.language,
    published_at: card.publishedAt ? card.publishedAt.toISOString() : null,
    authors: card.authorName ? [{ name: card.authorName, url: card.authorUrl, account: null }] : [],
  };
}

/** Mastodon's history entries: day (UNIX seconds), uses, accounts, all strings, newest first. */
export function presentHistory(days: readonly DayCount[]): Static<typeof TagHistoryEntity>[] {
  return days.map((d) => ({ day: String(d.dayMs / 1000), uses: String(d.uses), accounts: String(d.accounts) }));
}
