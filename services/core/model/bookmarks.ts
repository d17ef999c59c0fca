// Bookmarks: private to their owner; the serial id is the pagination cursor of /bookmarks.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface BookmarkDoc {
  _id: Id;
  accountId: Id;
  statusId: Id;
  createdAt: Date;
}

export const bookmarks = defineCollection<BookmarkDoc>('bookmarks', [
  { key: { accountId: 1, statusId: 1 }, name: 'account_status', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account_id' },
]);
