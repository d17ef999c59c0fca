// Documents asked for by a list of ids (a page of a feed, the ids of a request), in that order.
import type { Collection, Document, Filter } from 'mongodb';
import type { Id } from '../ids.ts';

/** The documents of `ids` that also match `filter`, in the order of `ids`; the rest left out. */
export async function findInOrder<T extends Document & { _id: Id }>(
  coll: Collection<T>,
  ids: readonly Id[],
  filter: Filter<T> = {},
): Promise<T[]> {
  if (ids.length === 0) return [];
  const found = (await coll.find({ ...filter, _id: { $in: [...ids] } } as Filter<T>).toArray()) as T[];
  const byId = new Map(found.map((d) => [d._id, d]));
  return ids.map((id) => byId.get(id)).filter((d) => d !== undefined);
}
