// Domains an account blocked for itself (GET/POST/DELETE /api/v1/domain_blocks).
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface AccountDomainBlockDoc extends AccountRecordDoc {
  /** Lower case, punycode, no trailing dot. */
  domain: string;
}

export const accountDomainBlocks = defineCollection<AccountDomainBlockDoc>(
  'account_domain_blocks',
  accountRecordIndexes('domain', { unique: 'account_domain', newestFirst: 'account' }),
);
