// Archives of an account's data (Mastodon's Backup): requested on /settings/export at most once a
// week, built by the scheduler, downloadable until they expire.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface BackupDoc {
  _id: Id;
  userId: Id;
  accountId: Id;
  state: 'pending' | 'processing' | 'done' | 'failed';
  /** Storage key of the zip once built. */
  storageKey: string | null;
  size: number | null;
  leaseUntil: Date | null;
  createdAt: Date;
  processedAt: Date | null;
}

export const backups = defineCollection<BackupDoc>('backups', [
  { key: { userId: 1, _id: -1 }, name: 'user' },
  { key: { state: 1, leaseUntil: 1 }, name: 'state' },
  { key: { processedAt: 1 }, name: 'processed' },
]);
