// Lists of accounts a user follows, and their members (list feeds read the members).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type RepliesPolicy = 'followed' | 'list' | 'none';
export const REPLIES_POLICIES: readonly RepliesPolicy[] = ['followed', 'list', 'none'];

export interface ListDoc {
  _id: Id;
  accountId: Id;
  title: string;
  repliesPolicy: RepliesPolicy;
  /** Members' statuses stay out of the owner's home feed. */
  exclusive: boolean;
  createdAt: Date;
}

export const lists = defineCollection<ListDoc>('lists', [{ key: { accountId: 1, _id: -1 }, name: 'account' }]);

export interface ListMemberDoc {
  _id: Id;
  listId: Id;
  /** The list's owner (who must follow the member). */
  ownerId: Id;
  accountId: Id;
  createdAt: Date;
}

export const listMembers = defineCollection<ListMemberDoc>('list_accounts', [
  { key: { listId: 1, accountId: 1 }, name: 'list_account', unique: true },
  { key: { listId: 1, _id: -1 }, name: 'list' },
  { key: { ownerId: 1, accountId: 1 }, name: 'owner_account' },
]);
