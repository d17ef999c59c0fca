// Account mutes, optionally with an expiry (the scheduler pipeline ends expired ones).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface MuteDoc extends AccountRecordDoc {
  targetAccountId: Id;
  hideNotifications: boolean;
  /** null: permanent. Expired mutes are ignored by readers and removed by the scheduler. */
  expiresAt: Date | null;
}

export const mutes = defineCollection<MuteDoc>('mutes', [
  ...accountRecordIndexes('targetAccountId', { unique: 'account_target', newestFirst: 'account' }),
  { key: { targetAccountId: 1 }, name: 'target' },
  { key: { expiresAt: 1 }, name: 'expiry' },
]);
