// Bookmarks: private to their owner; the serial id is the pagination cursor of /bookmarks.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface BookmarkDoc extends AccountRecordDoc {
  statusId: Id;
}

export const bookmarks = defineCollection<BookmarkDoc>(
  'bookmarks',
  accountRecordIndexes('statusId', { unique: 'account_status', newestFirst: 'account_id' }),
);
