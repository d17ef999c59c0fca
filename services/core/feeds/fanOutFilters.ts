// Whether a post's fan-out must read who blocks, mutes or lists its author (ADR 0020). Most
// accounts are in nobody's block, mute or list records, and those three reads were most of the
// MongoDB queries a post cost. The account carries a flag, set before the first such record about
// it is written and never unset, so a fan-out that sees it false can skip them: a record written
// after the flag was read races the fan-out exactly as one written after the reads would.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { listMembers } from '../model/lists.ts';

/** Called before a block, mute or list membership about `accountIds` is written. */
export async function markFanOutFilters(core: Core, accountIds: readonly Id[]): Promise<void> {
  if (accountIds.length === 0) return;
  await collection(core.db, accounts).updateMany(
    { _id: { $in: [...accountIds] }, fanOutFilters: { $ne: true } },
    { $set: { fanOutFilters: true } },
  );
}

/**
 * Whether the fan-out of `author`'s posts must read who blocks, mutes or lists them. An account
 * from before the flag is looked up once and the answer kept, unless a mark got there first.
 */
export async function mayBeFiltered(
  core: Core,
  author: Pick<CachedAccount, '_id' | 'fanOutFilters'>,
): Promise<boolean> {
  if (author.fanOutFilters !== undefined) return author.fanOutFilters;
  const one = { projection: { _id: 1 } };
  const found = await Promise.all([
    collection(core.db, blocks).findOne({ targetAccountId: author._id }, one),
    collection(core.db, mutes).findOne({ targetAccountId: author._id }, one),
    collection(core.db, listMembers).findOne({ accountId: author._id }, one),
  ]);
  const any = found.some((f) => f !== null);
  const kept = await collection(core.db, accounts).updateOne(
    { _id: author._id, fanOutFilters: { $exists: false } },
    { $set: { fanOutFilters: any } },
  );
  // Not kept: a mark (or another fan-out) set it meanwhile; reading who is the safe answer.
  return kept.matchedCount === 0 ? true : any;
}
