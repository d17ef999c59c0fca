// Reading statuses by id as the statuses routes need them (visibility is checked by the caller:
// statuses/visibility.ts), so routes parse, call core and present without touching collections.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { favourites, type FavouriteDoc } from '../model/favourites.ts';
import { findPage, findPageIn, type PageParams } from '../db/pages.ts';
import { bookmarks } from '../model/bookmarks.ts';

/** The status, deleted or not. */
export function findStatus(core: Core, id: Id): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({ _id: id });
}

/** The status unless deleted. */
export function findLiveStatus(core: Core, id: Id): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({ _id: id, deletedAt: null });
}

/** The statuses of `ids` that are not deleted, in the order of `ids`. */
export function findLiveStatuses(core: Core, ids: readonly Id[]): Promise<StatusDoc[]> {
  return findInOrder(collection(core.db, statuses), ids, { deletedAt: null });
}

export function findAuthor(core: Core, status: StatusDoc): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: status.accountId });
}

/** A status mark of an account: a favourite or a bookmark. */
export type MarkKind = 'favourites' | 'bookmarks';

const markDefs = { favourites, bookmarks };

/** Whether the account has favourited (or bookmarked) the status. */
export async function hasMarked(core: Core, kind: MarkKind, accountId: Id, statusId: Id): Promise<boolean> {
  return (await collection(core.db, markDefs[kind]).countDocuments({ accountId, statusId })) > 0;
}

/** A page of the account's favourites (or bookmarks), newest mark first. */
export function marksOfAccount(
  core: Core,
  kind: MarkKind,
  accountId: Id,
  p: PageParams,
): Promise<Array<{ _id: Id; statusId: Id }>> {
  return findPageIn<{ _id: Id; accountId: Id; statusId: Id }>(core.db, markDefs[kind], { accountId }, p);
}

/** A page of the status's favourites (who favourited it), newest first. */
export function favouritesOfStatus(core: Core, statusId: Id, p: PageParams): Promise<FavouriteDoc[]> {
  return findPage(collection(core.db, favourites), { statusId }, p);
}

/** A page of the live statuses that quote the status with its author's approval, newest first. */
export function quotesOfStatus(core: Core, statusId: Id, p: PageParams): Promise<StatusDoc[]> {
  return findPage(
    collection(core.db, statuses),
    { 'quote.quotedStatusId': statusId, 'quote.state': 'accepted', deletedAt: null },
    p,
  );
}

/** A page of the status's live reblogs (who reblogged it), newest first. */
export function reblogsOfStatus(core: Core, statusId: Id, p: PageParams): Promise<StatusDoc[]> {
  return findPage(collection(core.db, statuses), { reblogOfId: statusId, deletedAt: null }, p);
}
