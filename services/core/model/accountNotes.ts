// Private notes an account keeps about another (POST /api/v1/accounts/:id/note).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AccountNoteDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  comment: string;
  updatedAt: Date;
}

export const accountNotes = defineCollection<AccountNoteDoc>('account_notes', [
  { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
]);
