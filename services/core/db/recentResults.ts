// Results of hot, viewer-independent or per-viewer queries kept in this process for a moment: the
// first page of the public timelines, who blocks a viewer. An entry serves while it is younger
// than its time to live AND no write to the collections it depends on went through this process
// since it was read (every write through `collection()` to a collection declared `countWrites` or
// `cachedById` counts, db/mongo.ts, but one that only `$inc`s counters): this process's own writes
// show at once, other processes' within the time to live, as with the document cache's
// process-local copies. A collection may count its inserts per value of a field (`statuses` per
// author, `scopeInserts`): a result read with a filter naming values of that field is then kept
// through inserts of documents with other values (a post drops its author's newest pages and the
// public timelines, not every account's).
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

/** Collection name → the field its inserts are counted by (scopeInserts). */
const insertScopes = new Map<string, string>();

/**
 * Counts inserts into `collection` per value of `field` too. Declared by the collection
 * (defineCollection's `insertsScopedBy`).
 */
export function scopeInserts(collection: string, field: string): void {
  insertScopes.set(collection, field);
}

/** Inserts of one collection: a sequence number per insert, and the last one of each value. */
interface InsertCount {
  seq: number;
  last: Map<unknown, number>;
  /** Inserts up to this one count as made for every value (the map was emptied to bound it). */
  floor: number;
}

/** Values remembered per collection; past it the map starts again from a floor (still exact, only coarser). */
const MAX_SCOPE_VALUES = 50_000;
const insertCounts = new WeakMap<Db, Map<string, InsertCount>>();

function insertCountOf(db: Db, collection: string): InsertCount {
  let byName = insertCounts.get(db);
  if (!byName) insertCounts.set(db, (byName = new Map()));
  let count = byName.get(collection);
  if (!count) byName.set(collection, (count = { seq: 0, last: new Map(), floor: 0 }));
  return count;
}

/** Counts an insert of documents whose scope field holds `values`. */
function countInsert(db: Db, collection: string, values: unknown[]): void {
  const count = insertCountOf(db, collection);
  count.seq++;
  if (count.last.size + values.length > MAX_SCOPE_VALUES) {
    count.last.clear();
    count.floor = count.seq;
  }
  for (const v of values) count.last.set(v, count.seq);
}

/** The sequence number of the last insert of a document with value `v` (or one that may have been). */
function lastInsertOf(count: InsertCount, v: unknown): number {
  return count.last.get(v) ?? count.floor;
}

/**
 * The scope values of the documents write `name` inserts, or null when it is not an insert of
 * documents that all hold one (then it counts as any other write).
 */
function insertedValues(collection: string, name: string, args: unknown[]): unknown[] | null {
  const field = insertScopes.get(collection);
  if (field === undefined) return null;
  const docs = name === 'insertOne' ? [args[0]] : name === 'insertMany' ? args[0] : null;
  if (!Array.isArray(docs) || docs.length === 0) return null;
  const values: unknown[] = [];
  for (const d of docs) {
    const v: unknown = (d as Document | null)?.[field];
    if (v === undefined || v === null) return null;
    values.push(v);
  }
  return values;
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
 * unless it only moves counters (countersOnly); an insert into a collection that counts its inserts
 * by a field counts as such (scopeInserts).
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
      const inserted = insertedValues(collection, name, args);
      if (inserted) countInsert(db, collection, inserted);
      else if (!countersOnly(name, args)) countWrite(db, collection);
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

/**
 * A collection a kept result depends on; `filter`, the filter it was read with, limits what
 * inserts concern it when it names values of the collection's insert scope field.
 */
export interface ResultSource {
  name: string;
  filter?: Filter<Document>;
}

/** Where a source stood before a load: its writes, and its inserts (all, or those of its values). */
interface Stamp {
  writes: number;
  /** The insert sequence number then. */
  inserts: number;
  /** The scope values the result is limited to (null: every insert concerns it). */
  values: unknown[] | null;
}

function stampOf(db: Db, source: ResultSource): Stamp {
  const field = insertScopes.get(source.name);
  const values = field !== undefined && source.filter ? namedValues(source.filter, field) : null;
  return {
    writes: writeGeneration(db, source.name),
    inserts: field === undefined ? 0 : insertCountOf(db, source.name).seq,
    values,
  };
}

function unchangedSince(db: Db, source: ResultSource, stamp: Stamp): boolean {
  if (writeGeneration(db, source.name) !== stamp.writes) return false;
  if (!insertScopes.has(source.name)) return true;
  const count = insertCountOf(db, source.name);
  if (count.seq === stamp.inserts) return true;
  return stamp.values !== null && stamp.values.every((v) => lastInsertOf(count, v) <= stamp.inserts);
}

interface Entry {
  value: unknown;
  stamps: Stamp[];
}

const MAX_ENTRIES = 5000;
/** Per database; each entry kept for its caller's time to live. */
const resultsOf = cachePerOwner(() => new TtlCache<string, Entry>(0, MAX_ENTRIES));

/**
 * `load()`'s result, or the one kept under `key` while it is younger than `ttlMs` and no write to
 * `sources` went through this process since it was loaded (inserts: none that its filter could
 * match, see ResultSource). Concurrent misses each load.
 */
export async function recentResult<T>(
  db: Db,
  key: string,
  sources: readonly ResultSource[],
  ttlMs: number,
  load: () => Promise<T>,
): Promise<T> {
  const byKey = resultsOf(db);
  const now = Date.now();
  const hit = byKey.get(key, now);
  if (hit && sources.every((s, i) => unchangedSince(db, s, hit.stamps[i]))) return hit.value as T;
  // Stamped before the query: a write racing it makes the entry stale at once.
  const stamps = sources.map((s) => stampOf(db, s));
  const value = await load();
  byKey.set(key, { value, stamps }, now, ttlMs);
  return value;
}
