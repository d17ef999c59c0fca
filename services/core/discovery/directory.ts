// The profile directory (GET /api/v1/directory): discoverable accounts, most recently active or
// newest first, optionally local only, with offset pagination.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, visibleAccountFilter, type AccountDoc } from '../model/accounts.ts';

export async function directory(
  core: Core,
  opts: { order: 'active' | 'new'; local: boolean; offset: number; limit: number },
): Promise<AccountDoc[]> {
  const filter: Filter<AccountDoc> = {
    discoverable: true,
    suspendedAt: null,
    movedToAccountId: null,
    ...visibleAccountFilter,
  };
  if (opts.local) filter.domain = null;
  if (opts.order === 'active') filter.lastStatusAt = { $ne: null };
  return collection(core.db, accounts)
    .find(filter)
    .sort(opts.order === 'new' ? { discoverable: 1, _id: -1 } : { discoverable: 1, lastStatusAt: -1 })
    .skip(opts.offset)
    .limit(opts.limit)
    .toArray();
}
