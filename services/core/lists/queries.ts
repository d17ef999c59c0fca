// Reading a user's lists and their members, as GET /api/v1/lists/** shows them.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findPage, type PageParams } from '../db/pages.ts';
import { listMembers, lists, type ListDoc, type ListMemberDoc } from '../model/lists.ts';

/** The owner's lists, oldest first. */
export function listsOf(core: Core, ownerId: Id): Promise<ListDoc[]> {
  return collection(core.db, lists).find({ accountId: ownerId }).sort({ _id: 1 }).toArray();
}

/** Every member of the list, last added first (`limit=0`: Mastodon's unpaginated form). */
export async function allListMemberIds(core: Core, list: ListDoc): Promise<Id[]> {
  const all = await collection(core.db, listMembers).find({ listId: list._id }).sort({ _id: -1 }).toArray();
  return all.map((m) => m.accountId);
}

/** A page of the list's memberships, newest first. */
export function listMembersPage(core: Core, list: ListDoc, page: PageParams): Promise<ListMemberDoc[]> {
  return findPage(collection(core.db, listMembers), { listId: list._id }, page);
}

/** The owner's lists the account is in, oldest first. */
export async function listsContaining(core: Core, ownerId: Id, accountId: Id): Promise<ListDoc[]> {
  const memberships = await collection(core.db, listMembers).find({ ownerId, accountId }).toArray();
  if (memberships.length === 0) return [];
  return collection(core.db, lists)
    .find({ _id: { $in: memberships.map((m) => m.listId) }, accountId: ownerId })
    .sort({ _id: 1 })
    .toArray();
}
