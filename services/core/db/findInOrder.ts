// Documents asked for by a list of ids (a page of a feed, the ids of a request), in that order.
import type { Collection, Document, Filter } from 'mongodb';
import type { Id } from '../ids.ts';

/** The documents of `ids` that also match `filter`, in the order of `ids`; the rest left out. */
export function findInOrder<T extends Document & { _id: Id }>(
  coll: Collection<T>,
  ids: readonly Id[],
  filter?: Filter<T>,
): Promise<T[]>;
/** The same, with only `fields` (and `_id`) read: less for the store to encode and for us to parse. */
export function findInOrder<T extends Document & { _id: Id }, K extends keyof T & string>(
  coll: Collection<T>,
  ids: readonly Id[],
  filter: Filter<T>,
  fields: readonly K[],
): Promise<Pick<T, K | '_id'>[]>;
export async function findInOrder<T extends Document & { _id: Id }>(
  coll: Collection<T>,
  ids: readonly Id[],
  filter: Filter<T> = {},
  fields?: readonly string[],
): Promise<Partial<T>[]> {
  if (ids.length === 0) return [];
  const projection = fields ? { projection: Object.fromEntries(fields.map((f) => [f, 1])) } : {};
  const found = (await coll.find({ ...filter, _id: { $in: [...ids] } } as Filter<T>, projection).toArray()) as T[];
  const byId = new Map(found.map((d) => [d._id, d]));
  return ids.map((id) => byId.get(id)).filter((d) => d !== undefined);
}
