// Accounts featured on a profile (Mastodon's "endorsements", POST /api/v1/accounts/:id/pin).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface EndorsementDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  createdAt: Date;
}

export const endorsements = defineCollection<EndorsementDoc>('account_pins', [
  { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account' },
]);
