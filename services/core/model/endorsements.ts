// Accounts featured on a profile (Mastodon's "endorsements", POST /api/v1/accounts/:id/pin).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface EndorsementDoc extends AccountRecordDoc {
  targetAccountId: Id;
}

export const endorsements = defineCollection<EndorsementDoc>(
  'account_pins',
  accountRecordIndexes('targetAccountId', { unique: 'account_target', newestFirst: 'account' }),
);
