// What every record an account keeps of one other thing shares (a bookmark, a favourite, a pin,
// a followed tag, a blocked domain...): its serial id, which also pages the account's list of them.
import type { Db, Filter, IndexDescription } from 'mongodb';
import type { Id } from '../ids.ts';
import { collection, type CollectionDef } from '../db/mongo.ts';

export interface AccountRecordDoc {
  _id: Id;
  /** The account that keeps the record. */
  accountId: Id;
  createdAt: Date;
}

/**
 * The two indexes of an account's records of `target`: one record per (account, target), and the
 * account's records newest first. The names are those the collections were created with.
 */
export function accountRecordIndexes(
  target: string,
  names: { unique: string; newestFirst: 'account' | 'account_id' },
): IndexDescription[] {
  return [
    { key: { accountId: 1, [target]: 1 }, name: names.unique, unique: true },
    { key: { accountId: 1, _id: -1 }, name: names.newestFirst },
  ];
}

/** Which of `values` the account has a record of in `def` (the followed, the blocked, the featured...). */
export async function recordedAmong<T extends AccountRecordDoc, F extends keyof T & string>(
  db: Db,
  def: CollectionDef<T>,
  accountId: Id,
  field: F,
  values: readonly T[F][],
): Promise<Set<T[F]>> {
  if (values.length === 0) return new Set();
  const found = await collection(db, def)
    .find({ accountId, [field]: { $in: values } } as Filter<T>, { projection: { [field]: 1 } })
    .toArray();
  return new Set(found.map((r) => (r as T)[field]));
}

/** The `<account>:<value>` pairs of `accountIds` × `values` that have a record in `def`. */
export async function recordedPairs<T extends AccountRecordDoc>(
  db: Db,
  def: CollectionDef<T>,
  accountIds: readonly Id[],
  field: keyof T & string,
  values: readonly unknown[],
): Promise<Set<string>> {
  if (accountIds.length === 0 || values.length === 0) return new Set();
  const found = await collection(db, def)
    .find({ accountId: { $in: accountIds }, [field]: { $in: values } } as Filter<T>, {
      projection: { accountId: 1, [field]: 1 },
    })
    .toArray();
  return new Set(found.map((r) => `${r.accountId}:${String((r as T)[field])}`));
}
