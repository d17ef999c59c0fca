// Revisions of edited statuses. The first edit also stores the original, so the history lists
// every version oldest first, the current one last.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface StatusEditDoc {
  _id: Id;
  statusId: Id;
  accountId: Id;
  text: string;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  mediaIds: Id[];
  /** Poll option titles at this revision; null without a poll. */
  pollOptions: string[] | null;
  createdAt: Date;
}

export const statusEdits = defineCollection<StatusEditDoc>('status_edits', [
  { key: { statusId: 1, _id: 1 }, name: 'status' },
]);
