// Collections and pages in Mastodon's shapes (federation reference §5): OrderedCollection with
// `first` (a URI) and `totalItems`; pages with `partOf`, `next`/`prev`; hidden collections as
// counts only (no `first`: Mastodon infers "hidden" from its absence).
import { AS_CONTEXT, HASHTAG_CONTEXT, NOTE_CONTEXT, withContext, type JsonLd } from './context.ts';

export function renderOrderedCollection(id: string, totalItems: number, first: string | null): JsonLd {
  const out: JsonLd = { id, type: 'OrderedCollection', totalItems };
  if (first !== null) out.first = first;
  return withContext(AS_CONTEXT, out);
}

export interface PageInput {
  id: string;
  partOf: string;
  items: unknown[];
  next?: string | null;
  prev?: string | null;
  totalItems?: number;
}

/** OrderedCollectionPage; Note context because outbox pages embed Create{Note}. */
export function renderOrderedPage(input: PageInput, context: unknown = NOTE_CONTEXT): JsonLd {
  const out: JsonLd = { id: input.id, type: 'OrderedCollectionPage' };
  if (input.totalItems !== undefined) out.totalItems = input.totalItems;
  if (input.next) out.next = input.next;
  if (input.prev) out.prev = input.prev;
  out.partOf = input.partOf;
  out.orderedItems = input.items;
  return withContext(context, out);
}

/** Featured (pinned) statuses: every item inline, no paging. */
export function renderFeaturedCollection(id: string, items: unknown[]): JsonLd {
  return withContext(NOTE_CONTEXT, { id, type: 'OrderedCollection', totalItems: items.length, orderedItems: items });
}

/** Featured hashtags: an unordered Collection of Hashtag objects. */
export function renderFeaturedTagsCollection(id: string, tags: Array<{ name: string; href: string }>): JsonLd {
  return withContext(HASHTAG_CONTEXT, {
    id,
    type: 'Collection',
    totalItems: tags.length,
    items: tags.map((t) => ({ type: 'Hashtag', href: t.href, name: `#${t.name}` })),
  });
}

/**
 * A page of a status's `replies` as Rails writes it (query keys sorted: `min_id`,
 * `only_other_accounts`, `page`), so the ids we link and the ids we serve are the same strings.
 */
export function repliesPageUri(
  repliesUri: string,
  opts: { minId: bigint | string | null; onlyOtherAccounts: string | null },
): string {
  const query: string[] = [];
  if (opts.minId !== null) query.push(`min_id=${encodeURIComponent(String(opts.minId))}`);
  if (opts.onlyOtherAccounts !== null) query.push(`only_other_accounts=${encodeURIComponent(opts.onlyOtherAccounts)}`);
  query.push('page=true');
  return `${repliesUri}?${query.join('&')}`;
}

export interface CollectionPageInput {
  id: string;
  partOf: string;
  items: unknown[];
  next: string | null;
}

/** An unordered CollectionPage (Mastodon's `type: :unordered` presenter with `part_of`). */
export function renderCollectionPage(input: CollectionPageInput): JsonLd {
  const out: JsonLd = { id: input.id, type: 'CollectionPage' };
  if (input.next) out.next = input.next;
  out.partOf = input.partOf;
  out.items = input.items;
  return out;
}
