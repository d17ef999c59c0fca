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
