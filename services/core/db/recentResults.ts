// Results of hot, viewer-independent or per-viewer queries kept in this process for a moment: the
// first page of the public timelines, who blocks a viewer. An entry serves while it is younger
// than its time to live AND no write to the collections it depends on went through this process
// since it was read (every write through `collection()` to a collection declared `countWrites` or
// `cachedById` counts, db/mongo.ts, but one that only `$inc`s counters): this process's own writes
// show at once, other processes' within the time to live, as with the document cache's
// process-local copies.
import type { Db, Document, Filter } from 'mongodb';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';

/** Per database: collection name → writes made through this process so far. */
const generations = new WeakMap<Db, Map<string, number>>();

export function writeGeneration(db: Db, collection: string): number {
  return generations.get(db)?.get(collection) ?? 0;
}

/** Counts a write (called after it, by the collection wrappers). */
export function countWrite(db: Db, collection: string): void {
  let byName = generations.get(db);
  if (!byName) generations.set(db, (byName = new Map()));
  byName.set(collection, (byName.get(collection) ?? 0) + 1);
}

/** The writes that name the documents they change by a filter (the document cache reads it). */
const FILTERED_WRITES = new Set([
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
]);

const WRITES = new Set(['insertOne', 'insertMany', ...FILTERED_WRITES, 'bulkWrite']);

/** The values of `field` a filter or a document names (equality or `$in`), or null when it names none. */
export function namedValues(doc: Filter<Document> | Document | undefined, field: string): unknown[] | null {
  const v: unknown = doc?.[field];
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return [v];
  if (typeof v === 'object' && Object.keys(v).length === 1 && Array.isArray((v as { $in?: unknown }).$in))
    return (v as { $in: unknown[] }).$in;
  return null;
}

/** A bulkWrite's operations, as the caches read them. */
export interface BulkOp {
  insertOne?: { document: Document };
  updateOne?: { filter: Filter<Document>; update: Document };
  updateMany?: { filter: Filter<Document>; update: Document };
  replaceOne?: { filter: Filter<Document>; replacement: Document };
  deleteOne?: { filter: Filter<Document> };
  deleteMany?: { filter: Filter<Document> };
}

export function isFilteredWrite(name: string): boolean {
  return FILTERED_WRITES.has(name);
}

export function isWriteMethod(name: string): boolean {
  return WRITES.has(name);
}

/** Whether an update document only moves counters (`$inc` alone, not a pipeline). */
function incOnly(update: unknown): boolean {
  if (!update || typeof update !== 'object' || Array.isArray(update)) return false;
  const keys = Object.keys(update);
  return keys.length === 1 && keys[0] === '$inc';
}

/**
 * Whether write `name` with `args` only moves counters. No result kept here is chosen by a
 * counter (pages and memoised queries filter on ids, visibility, deletion, authors, tags), so such
 * a write leaves them be: every favourite or boost of a status would otherwise drop every newest
 * page of `statuses`, and under write load those pages would be read from MongoDB every time.
 */
function countersOnly(name: string, args: unknown[]): boolean {
  if (name === 'updateOne' || name === 'updateMany') return incOnly(args[1]);
  if (name !== 'bulkWrite' || !Array.isArray(args[0]) || args[0].length === 0) return false;
  return (args[0] as BulkOp[]).every((op) => {
    const keys = Object.keys(op);
    const update = op.updateOne ?? op.updateMany;
    return keys.length === 1 && update !== undefined && incOnly(update.update);
  });
}

/**
 * `method` (write `name`) of a collection, counting the write once it has been made (or failed),
 * unless it only moves counters (countersOnly).
 */
export function countingWrite(
  db: Db,
  collection: string,
  name: string,
  method: (...args: unknown[]) => Promise<unknown>,
  target: unknown,
): (...args: unknown[]) => Promise<unknown> {
  return async (...args: unknown[]) => {
    try {
      return await method.apply(target, args);
    } finally {
      if (!countersOnly(name, args)) countWrite(db, collection);
    }
  };
}

const wrapped = new WeakMap<Db, Map<string, unknown>>();

/** `coll` with its writes counted (for collections not cached by id, whose wrapper counts them). */
export function withWriteCount<C extends { collectionName: string }>(db: Db, coll: C): C {
  let byName = wrapped.get(db);
  if (!byName) wrapped.set(db, (byName = new Map()));
  const hit = byName.get(coll.collectionName);
  if (hit) return hit as C;
  const proxy = new Proxy(coll, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return isWriteMethod(prop) ? countingWrite(db, target.collectionName, prop, method, target) : method.bind(target);
    },
  });
  byName.set(coll.collectionName, proxy);
  return proxy;
}

interface Entry {
  value: unknown;
  generations: number[];
}

const MAX_ENTRIES = 5000;
/** Per database; each entry kept for its caller's time to live. */
const resultsOf = cachePerOwner(() => new TtlCache<string, Entry>(0, MAX_ENTRIES));

/**
 * `load()`'s result, or the one kept under `key` while it is younger than `ttlMs` and no write to
 * `collections` went through this process since it was loaded. Concurrent misses each load.
 */
export async function recentResult<T>(
  db: Db,
  key: string,
  collections: readonly { name: string; _doc?: Document }[],
  ttlMs: number,
  load: () => Promise<T>,
): Promise<T> {
  const byKey = resultsOf(db);
  const now = Date.now();
  const current = collections.map((c) => writeGeneration(db, c.name));
  const hit = byKey.get(key, now);
  if (hit && hit.generations.every((g, i) => g === current[i])) return hit.value as T;
  // The generations read before the query: a write racing it makes the entry stale at once.
  const value = await load();
  byKey.set(key, { value, generations: current }, now, ttlMs);
  return value;
}
