// Building blocks of the graph events: every one names both accounts and whether each is local
// (`…Domain` null), so consumers (fan-out, notifications, delivery) rarely read MongoDB back.
import type { AccountDoc } from '../model/accounts.ts';

export interface GraphPair {
  accountId: string;
  accountDomain: string | null;
  targetAccountId: string;
  targetDomain: string | null;
}

export function graphPair(
  account: Pick<AccountDoc, '_id' | 'domain'>,
  target: Pick<AccountDoc, '_id' | 'domain'>,
): GraphPair {
  return {
    accountId: String(account._id),
    accountDomain: account.domain,
    targetAccountId: String(target._id),
    targetDomain: target.domain,
  };
}
