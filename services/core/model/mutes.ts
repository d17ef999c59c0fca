// Account mutes, optionally with an expiry (the scheduler pipeline ends expired ones).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface MuteDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  hideNotifications: boolean;
  /** null: permanent. Expired mutes are ignored by readers and removed by the scheduler. */
  expiresAt: Date | null;
  createdAt: Date;
}

export const mutes = defineCollection<MuteDoc>('mutes', [
  { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { targetAccountId: 1 }, name: 'target' },
  { key: { expiresAt: 1 }, name: 'expiry' },
]);
