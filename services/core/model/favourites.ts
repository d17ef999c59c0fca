// Favourites: one per (account, status); the serial id is the pagination cursor of /favourites.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface FavouriteDoc extends AccountRecordDoc {
  statusId: Id;
}

export const favourites = defineCollection<FavouriteDoc>('favourites', [
  ...accountRecordIndexes('statusId', { unique: 'account_status', newestFirst: 'account_id' }),
  { key: { statusId: 1, _id: -1 }, name: 'status_id' },
]);
