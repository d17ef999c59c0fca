// Favourites: one per (account, status); the serial id is the pagination cursor of /favourites.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface FavouriteDoc {
  _id: Id;
  accountId: Id;
  statusId: Id;
  createdAt: Date;
}

export const favourites = defineCollection<FavouriteDoc>('favourites', [
  { key: { accountId: 1, statusId: 1 }, name: 'account_status', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account_id' },
  { key: { statusId: 1, _id: -1 }, name: 'status_id' },
]);
