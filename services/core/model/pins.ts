// Pinned statuses ("featured" collection of an account).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface PinDoc {
  _id: Id;
  accountId: Id;
  statusId: Id;
  createdAt: Date;
}

export const pins = defineCollection<PinDoc>('status_pins', [
  { key: { accountId: 1, statusId: 1 }, name: 'account_status', unique: true },
  { key: { statusId: 1 }, name: 'status' },
]);
