// Pinned statuses ("featured" collection of an account).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import type { AccountRecordDoc } from './accountRecord.ts';

export interface PinDoc extends AccountRecordDoc {
  statusId: Id;
}

export const pins = defineCollection<PinDoc>('status_pins', [
  { key: { accountId: 1, statusId: 1 }, name: 'account_status', unique: true },
  { key: { statusId: 1 }, name: 'status' },
]);
