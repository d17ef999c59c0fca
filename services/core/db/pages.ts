// Cursor pages of a collection as Mastodon pages its lists (reference conventions §7): `max_id`
// (older than), `since_id` (newest above), `min_id` (immediately above), `limit`, newest first.
// Parsing the parameters and writing the Link header are the API's (api/pagination.ts).
import type { Collection, Document, Filter } from 'mongodb';
import type { Id } from '../ids.ts';

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
