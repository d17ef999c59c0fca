// Reading the rankings: the allowed items (reviewed, see review.ts) of one kind, the caller's
// languages first (Mastodon orders, it does not filter), then by score; offset pagination.
import type { Core } from '../context.ts';
import type { TrendKind } from '../model/trends.ts';
import { trendKeys } from './counters.ts';
import { allowedAmong, reviewsOf } from './review.ts';
import { collection } from '../db/mongo.ts';
import { previewCardProviders, previewCards } from '../model/previewCards.ts';
import { publisherDomain } from '../previews/cards.ts';

/** How deep a ranking is read. */
const RANKING_DEPTH = 1000;

export interface RankedItem {
  item: string;
  score: number;
  language: string | null;
}

export async function ranking(core: Core, kind: TrendKind): Promise<RankedItem[]> {
  const flat = await core.redis.zrevrange(trendKeys.ranking(kind), 0, RANKING_DEPTH - 1, 'WITHSCORES');
  const items: RankedItem[] = [];
  for (let i = 0; i < flat.length; i += 2)
    items.push({ item: flat[i] as string, score: Number(flat[i + 1]), language: null });
  if (items.length === 0) return items;
  const langs = await core.redis.hmget(trendKeys.itemLanguage(kind), ...items.map((i) => i.item));
  items.forEach((it, i) => (it.language = langs[i] ?? null));
  return items;
}

export interface TrendQuery {
  limit: number;
  offset: number;
  /** The caller's languages (ISO 639-1), ranked first; empty for none. */
  languages: readonly string[];
}

export async function trendingItems(core: Core, kind: TrendKind, q: TrendQuery): Promise<RankedItem[]> {
  const all = await ranking(core, kind);
  const allowed = await allowedAmong(
    core,
    kind,
    all.map((i) => i.item),
  );
  const preferred = new Set(q.languages);
  const list = all
    .filter((i) => allowed.has(i.item))
    .map((it, index) => ({ it, index, pref: it.language !== null && preferred.has(it.language) ? 1 : 0 }))
    .sort((a, b) => b.pref - a.pref || a.index - b.index)
    .map((x) => x.it);
  return list.slice(q.offset, q.offset + q.limit);
}

/** The admin view: every ranked item with its review state. */
export async function rankedForReview(
  core: Core,
  kind: TrendKind,
  q: { limit: number; offset: number },
): Promise<(RankedItem & { state: 'approved' | 'rejected' | null; requestedReview: boolean })[]> {
  const all = (await ranking(core, kind)).slice(q.offset, q.offset + q.limit);
  const reviews = await reviewsOf(
    core,
    kind,
    all.map((i) => i.item),
  );
  return all.map((i) => {
    const r = reviews.get(i.item);
    return { ...i, state: r?.state ?? null, requestedReview: r !== undefined && r.requestedReviewAt !== null };
  });
}

export interface PublisherReview {
  id: bigint;
  domain: string;
  state: 'approved' | 'rejected' | null;
  reviewedAt: Date | null;
  requestedReviewAt: Date | null;
}

/** The publishers of the ranked links (best link first), with their review state. */
export async function rankedPublishers(core: Core, q: { limit: number; offset: number }): Promise<PublisherReview[]> {
  const links = await ranking(core, 'link');
  const cards = links.length
    ? await collection(core.db, previewCards)
        .find({ _id: { $in: links.map((l) => BigInt(l.item)) } }, { projection: { url: 1 } })
        .toArray()
    : [];
  const urlOf = new Map(cards.map((c) => [String(c._id), c.url]));
  const domains = [...new Set(links.map((l) => publisherDomain(urlOf.get(l.item) ?? '')).filter((d) => d))];
  const page = domains.slice(q.offset, q.offset + q.limit);
  const [providers, reviews] = await Promise.all([
    collection(core.db, previewCardProviders)
      .find({ domain: { $in: page } })
      .toArray(),
    reviewsOf(core, 'publisher', page),
  ]);
  const byDomain = new Map(providers.map((p) => [p.domain, p]));
  return page.flatMap((domain) => {
    const p = byDomain.get(domain);
    if (!p) return [];
    const r = reviews.get(domain);
    return [
      {
        id: p._id,
        domain,
        state: r?.state ?? null,
        reviewedAt: r?.reviewedAt ?? null,
        requestedReviewAt: r?.requestedReviewAt ?? null,
      },
    ];
  });
}
