// Cursor pages of a collection as Mastodon pages its lists (reference conventions §7): `max_id`
// (older than), `since_id` (newest above), `min_id` (immediately above), `limit`, newest first.
// Parsing the parameters and writing the Link header are the API's (api/pagination.ts).
import type { Collection, Db, Document, Filter } from 'mongodb';
import type { Id } from '../ids.ts';
import { findInOrder } from './findInOrder.ts';
import { collection, type CollectionDef } from './mongo.ts';
import { recentResult } from './recentResults.ts';

export interface PageParams {
  maxId: Id | null;
  sinceId: Id | null;
  minId: Id | null;
  limit: number;
}

/** One page of `coll` under `filter`, cursor on `field` (an integer id), newest first. */
export async function findPage<T extends Document>(
  coll: Collection<T>,
  filter: Filter<T>,
  p: PageParams,
  field = '_id',
  projection?: Document,
): Promise<T[]> {
  if (p.limit === 0) return [];
  const range: Record<string, Id> = {};
  if (p.maxId !== null) range.$lt = p.maxId;
  const lower = p.minId ?? p.sinceId;
  if (lower !== null) range.$gt = lower;
  const query = (Object.keys(range).length ? { ...filter, [field]: range } : filter) as Filter<T>;
  if (p.minId !== null) {
    const page = await coll
      .find(query, projection ? { projection } : {})
      .sort({ [field]: 1 })
      .limit(p.limit)
      .toArray();
    return (page as T[]).reverse();
  }
  return (await coll
    .find(query, projection ? { projection } : {})
    .sort({ [field]: -1 })
    .limit(p.limit)
    .toArray()) as T[];
}

/**
 * A page of records (pins, tag follows, ...) under `filter`, and the documents they point at
 * (`target`) in the records' order, those not matching `targetFilter` left out. The records are
 * what the page's Link header cursors on.
 */
export async function findRecordPage<R extends Document, T extends Document & { _id: Id }>(
  db: Db,
  records: CollectionDef<R>,
  filter: Filter<R>,
  page: PageParams,
  targets: CollectionDef<T>,
  target: (record: R) => Id,
  targetFilter: Filter<T> = {},
): Promise<{ records: R[]; targets: T[] }> {
  const found = await findPage(collection(db, records), filter, page);
  return { records: found, targets: await findInOrder(collection(db, targets), found.map(target), targetFilter) };
}

/** One page of `def`'s documents under `filter`, newest first (findPage on its collection). */
export function findPageIn<T extends Document>(
  db: Db,
  def: CollectionDef<T>,
  filter: Filter<T>,
  p: PageParams,
  field = '_id',
): Promise<T[]> {
  return findPage(collection(db, def) as Collection<T>, filter, p, field);
}

/**
 * The `_id`s of a page of `def`'s documents matching `filter`, newest first. The newest page (no
 * cursor), which clients poll, is kept in this process for NEWEST_PAGE_TTL_MS: a write through this
 * process shows at once, another process's within that time (db/recentResults.ts).
 */
export async function pageIdsOf<T extends { _id: Id }>(
  db: Db,
  def: CollectionDef<T>,
  filter: Filter<T>,
  p: PageParams,
): Promise<Id[]> {
  const load = async () =>
    (await findPage(collection(db, def) as Collection<T>, filter, p, '_id', { _id: 1 })).map((d) => d._id);
  if (p.maxId !== null || p.minId !== null || p.sinceId !== null) return load();
  const key = `newest:${def.name}:${p.limit}:${JSON.stringify(filter, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`;
  // With its filter: a page of one author's statuses is kept through others' posts.
  return recentResult(db, key, [{ name: def.name, filter: filter as Filter<Document> }], NEWEST_PAGE_TTL_MS, load);
}

const NEWEST_PAGE_TTL_MS = 1000;
