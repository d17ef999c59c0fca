// Accounts that may not use the API any more right now: suspended, or with a disabled login. The
// streaming server closes their sockets (REST requests are refused by the auth plugin).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { users } from '../model/users.ts';

export async function barredAccounts(core: Core, accountIds: Id[]): Promise<Set<bigint>> {
  const ids = [...new Set(accountIds)];
  if (ids.length === 0) return new Set();
  const [suspended, disabled] = await Promise.all([
    collection(core.db, accounts)
      .find({ _id: { $in: ids }, suspendedAt: { $ne: null } }, { projection: { _id: 1 } })
      .toArray(),
    collection(core.db, users)
      .find({ accountId: { $in: ids }, disabled: true }, { projection: { accountId: 1 } })
      .toArray(),
  ]);
  return new Set([...suspended.map((a) => a._id), ...disabled.map((u) => u.accountId)]);
}
