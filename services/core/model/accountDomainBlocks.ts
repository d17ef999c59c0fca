// Domains an account blocked for itself (GET/POST/DELETE /api/v1/domain_blocks).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AccountDomainBlockDoc {
  _id: Id;
  accountId: Id;
  /** Lower case, punycode, no trailing dot. */
  domain: string;
  createdAt: Date;
}

export const accountDomainBlocks = defineCollection<AccountDomainBlockDoc>('account_domain_blocks', [
  { key: { accountId: 1, domain: 1 }, name: 'account_domain', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account' },
]);
