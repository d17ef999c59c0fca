// When a remote status is stored, which replies job (if any) its `replies` collection calls for:
// Mastodon's Create handler runs FetchRepliesService on the Note's embedded first page without
// fetching anything, and queues FetchRepliesWorker only when the collection is a bare id (or its
// first page is not embedded). Pure; the job runs in the `replies` pipeline (fetchReplies.ts).
import type { NewEvent } from '../../events/outbox.ts';
import type { StatusDoc } from '../../model/statuses.ts';
import { statuses } from '../../model/statuses.ts';
import { asArray, idOf, obj, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';

/** Replies taken from one first page (Mastodon's FetchRepliesService::MAX_REPLIES). */
export const FIRST_PAGE_REPLIES = 5;
/** Levels of replies followed below a status stored from an inbox or a fetch. */
export const FIRST_PAGE_DEPTH = 3;

/** The items (ids) of a collection page object: `items` or `orderedItems`. */
export function pageItemIds(page: JsonObject): string[] {
  const items = page.items !== undefined ? page.items : page.orderedItems;
  return asArray(items)
    .map((i) => idOf(i))
    .filter((i): i is string => i !== null);
}

/** Same-host ids only (against amplification: a collection names only its own server's posts). */
export function sameHostIds(ids: string[], reference: string, max: number): string[] {
  const host = hostOf(reference);
  if (host === null) return [];
  return ids.filter((id) => /^https?:\/\//i.test(id) && hostOf(id) === host).slice(0, max);
}

/**
 * The first-page job for a status just stored from `object`, or null when its `replies` names
 * nothing to fetch (no collection, or an embedded first page without items), or `depth` is used up.
 */
export function firstPageRepliesJob(
  status: Pick<StatusDoc, '_id' | 'uri'>,
  actorUri: string,
  object: JsonObject,
  depth: number,
): NewEvent<'RepliesFetchRequested'> | null {
  if (depth <= 0 || object.replies === undefined || object.replies === null) return null;
  const replies = obj(object.replies);
  const collectionId = idOf(object.replies);
  let items: string[] = [];
  let collection: string | null = null;
  if (replies === null) collection = collectionId;
  else {
    const first = replies.first;
    const firstPage = obj(first);
    if (firstPage) items = pageItemIds(firstPage);
    else if (typeof first === 'string') collection = collectionId;
    else if (replies.items !== undefined || replies.orderedItems !== undefined) items = pageItemIds(replies);
    else collection = collectionId;
  }
  items = sameHostIds(items, actorUri, FIRST_PAGE_REPLIES);
  if (items.length === 0 && collection === null) return null;
  if (collection !== null && hostOf(collection) !== hostOf(status.uri)) return null;
  return {
    type: 'RepliesFetchRequested',
    key: hostOf(status.uri) ?? status.uri,
    payload: { statusId: String(status._id), mode: 'first-page', collection, items, depth, refreshKey: null },
    verify: { collection: statuses.name, filter: { _id: status._id }, expect: 'exists' },
  };
}
