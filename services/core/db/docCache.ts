// A read-through cache of documents by `_id` in Redis, for the few collections every request reads
// (access tokens, users, accounts, statuses): the hot paths then cost one Redis round trip instead
// of several MongoDB queries.
//
// Invalidation does not depend on callers remembering it: `collection()` hands out, for a
// collection declared with `cachedById`, a wrapper whose every write (update, replace, delete,
// findOneAnd*, bulkWrite) drops the cached copies of the documents it touched, found from an `_id`
// filter or, for other filters, by reading the matching ids just before the write. Each document's
// copies live in one Redis hash (`doc:<collection>:<id>`, one field per view), so dropping them does
// not need to know which views exist. A drop also bumps the document's generation, and a reader
// fills the cache only if the generation is still the one it saw before its MongoDB read (one Lua
// script): a reader that fetched the document before a write cannot put that old copy back after
// the write's drop, while the first read after the write refills at once (a fixed tombstone kept a
// document written every few seconds, an author's account while they post, out of the cache for
// good; ADR 0009). Entries expire after a few minutes, which bounds the staleness of anything that
// still slipped through (a failed Redis call). One write a request waits on replaces the copies
// instead, under the same generation check (writeThrough, ADR 0021).
import { BSON, type Collection, type Db, type Document, type Filter } from 'mongodb';
import { batch, slotsApart, type Redis } from '../db/redis.ts';
import type { Core } from '../context.ts';
import type { DocView } from './docViews.ts';
import {
  countWrite,
  countingWrite,
  isFilteredWrite,
  isWriteMethod,
  namedValues,
  withWriteCount,
  type BulkOp,
} from './recentResults.ts';
import { TtlCache } from '../cache/ttlCache.ts';

const ENTRY_TTL_SECONDS = 300;
/** A generation outlives any read under way (a reader that finds none compares with ''). */
const GENERATION_TTL_MS = 600_000;

const LOCAL_MAX = 20_000;
/** Per database and collection: view name → id → value (the process-local layer). */
const locals = new WeakMap<Db, Map<string, Map<string, TtlCache<bigint, unknown>>>>();

function localOf(db: Db, collection: string, view: string, ttlMs: number): TtlCache<bigint, unknown> {
  let byCollection = locals.get(db);
  if (!byCollection) locals.set(db, (byCollection = new Map()));
  let byView = byCollection.get(collection);
  if (!byView) byCollection.set(collection, (byView = new Map()));
  let cache = byView.get(view);
  if (!cache) byView.set(view, (cache = new TtlCache(ttlMs, LOCAL_MAX)));
  return cache;
}

/**
 * Per database and collection: how often this process dropped local copies. A reader keeps what it
 * read in the local layer only if no drop came while it read: a copy read before a write of this
 * process, answered after the write's drop, must not be kept over it (read-your-writes in one process).
 */
const localDrops = new WeakMap<Db, Map<string, number>>();

function localDropCount(db: Db, collection: string): number {
  return localDrops.get(db)?.get(collection) ?? 0;
}

/**
 * A process-local layer of copies of `collection`'s documents by id, kept for `ttlMs`, which every
 * write through this process to one of them drops, as it drops the views' local copies; other
 * processes' writes show once a copy expires.
 */
export function processCopies<V>(db: Db, collection: string, name: string, ttlMs: number): TtlCache<bigint, V> {
  return localOf(db, collection, `process:${name}`, ttlMs) as TtlCache<bigint, V>;
}

/** Per database, collection and view: id → the bytes last read and their parse (shareParsed). */
const parsed = new WeakMap<Db, Map<string, Map<bigint, { bytes: Buffer; value: unknown }>>>();

function parsedOf(db: Db, collection: string, view: string): Map<bigint, { bytes: Buffer; value: unknown }> {
  let byView = parsed.get(db);
  if (!byView) parsed.set(db, (byView = new Map()));
  const key = `${collection}\0${view}`;
  let byId = byView.get(key);
  if (!byId) byView.set(key, (byId = new Map()));
  return byId;
}

/** Freezes a parsed document and its nested objects and arrays: shared copies must not change. */
function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A BSON copy read from Redis, parsed, or the shared parse of the same bytes. */
function parseCopy<R>(r: Buffer, id: bigint, shared: Map<bigint, { bytes: Buffer; value: unknown }> | null): R {
  if (!shared) return BSON.deserialize(r, { useBigInt64: true }) as R;
  const last = shared.get(id);
  if (last && last.bytes.equals(r)) return last.value as R;
  const value = deepFreeze(BSON.deserialize(r, { useBigInt64: true }) as R);
  if (!last && shared.size >= LOCAL_MAX) shared.delete(shared.keys().next().value as bigint); // oldest first
  // A copy: the reply may be a slice of a larger socket buffer.
  shared.set(id, { bytes: Buffer.from(r), value });
  return value;
}

// The id is a Redis Cluster hash tag: a copy and its tombstone share a slot (FILL reads both).
// Renamed from `doc:<collection>:<id>`: the old entries are no longer read and expire in minutes.
function docKey(collection: string, id: bigint): string {
  return `doc:${collection}:{${id}}`;
}
function generationKey(collection: string, id: bigint): string {
  return `doc:${collection}:{${id}}:g`;
}

// One round trip for a whole page: the field of each key (KEYS[i], field ARGV[1]). A single
// document is read with HGET: a script call costs Redis about twenty times as much. On a cluster
// the keys of a page lie in many slots: each is read with HGET, all sent together (one write per
// node, see connectRedis).
const READ = `local out = {}
for i, k in ipairs(KEYS) do out[i] = redis.call('HGET', k, ARGV[1]) end
return out`;

const FILL = `if (redis.call('GET', KEYS[2]) or '') ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`;

// writeThrough's replacement of a document's copies (KEYS: its hash, its generation; ARGV: the
// generation read before the find, the generation's and the copies' lifetimes, then view and
// value pairs): dropped and the generation bumped in any case; the new copies set only if no
// other write bumped the generation since it was read.
const REPLACE = `local fresh = (redis.call('GET', KEYS[2]) or '') == ARGV[1]
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if not fresh or #ARGV < 5 then return 0 end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`;

type CacheRedis = Redis & {
  docCacheRead(numKeys: number, ...args: (string | number)[]): Promise<(string | null)[]>;
  docCacheReadBuffer(numKeys: number, ...args: (string | number)[]): Promise<(Buffer | null)[]>;
};

/** The Redis connection of each database whose writes drop cached copies (installed by createCore). */
const redisOf = new WeakMap<Db, Redis>();

/** The Redis connection whose cached copies `db`'s writes drop (installDocCache), if any. */
export function cacheRedisOf(db: Db): Redis | undefined {
  return redisOf.get(db);
}

export function installDocCache(db: Db, redis: Redis): void {
  redis.defineCommand('docCacheRead', { lua: READ });
  redisOf.set(db, redis);
}

/**
 * The documents of `ids` as `view` shows them, from Redis where cached, else from MongoDB (and
 * then cached). Unknown ids are absent from the map.
 */
export async function readThrough<T extends Document, R>(
  core: Core,
  view: DocView<T, R>,
  ids: readonly bigint[],
): Promise<Map<bigint, R>> {
  const out = new Map<bigint, R>();
  if (ids.length === 0) return out;
  const name = view.collection.name;
  const redis = redisOf.get(core.db) as CacheRedis | undefined;
  let unique = [...new Set(ids)];
  const now = Date.now();
  const local = view.localTtlMs ? localOf(core.db, name, view.name, view.localTtlMs) : null;
  if (local) {
    unique = unique.filter((id) => {
      const hit = local.get(id, now);
      if (hit === undefined) return true;
      out.set(id, hit as R);
      return false;
    });
    if (unique.length === 0) return out;
  }
  const drops = local ? localDropCount(core.db, name) : 0;
  const keepLocally = (id: bigint, value: R) => {
    if (local && localDropCount(core.db, name) === drops) local.set(id, value, now);
  };
  let missing = unique;
  if (redis) {
    const keys = unique.map((id) => docKey(name, id));
    missing = [];
    if (view.derive) {
      const replies = await (
        keys.length === 1 || slotsApart(redis)
          ? Promise.all(keys.map((k) => redis.hget(k, view.name)))
          : redis.docCacheRead(keys.length, ...keys, view.name)
      ).catch(() => null);
      unique.forEach((id, i) => {
        const r = replies?.[i];
        if (!r) return void missing.push(id);
        const value = JSON.parse(r) as R;
        out.set(id, value);
        keepLocally(id, value);
      });
    } else {
      const replies = await (
        keys.length === 1 || slotsApart(redis)
          ? Promise.all(keys.map((k) => redis.hgetBuffer(k, view.name)))
          : redis.docCacheReadBuffer(keys.length, ...keys, view.name)
      ).catch(() => null);
      const shared = view.shareParsed ? parsedOf(core.db, name, view.name) : null;
      unique.forEach((id, i) => {
        const r = replies?.[i];
        if (!r || r.length === 0) return void missing.push(id);
        const value = parseCopy<R>(r, id, shared);
        out.set(id, value);
        // Kept copies are handed to every reader: frozen (shared parses already are).
        if (local) keepLocally(id, shared ? value : deepFreeze(value));
      });
    }
  }
  if (missing.length === 0) return out;
  // The generations before the read: a write after this point keeps what we read out of the cache.
  const generationOf = redis ? await generationsOf(redis, name, missing) : new Map<bigint, Generation>();
  const found = view.base
    ? ([...(await readThrough(core, view.base, missing)).values()] as { _id: bigint }[])
    : await findForView(core, view, missing);
  const values: R[] = view.derive ? await view.derive(core, found as unknown as T[]) : (found as unknown as R[]);
  if (redis && found.length > 0) {
    const pipe = batch(redis);
    fillAll(pipe, view, found, values, generationOf);
    await pipe.exec().catch(() => undefined);
  }
  found.forEach((doc, i) => {
    out.set(doc._id, values[i] as R);
    if (local) keepLocally(doc._id, (view.derive ? values[i] : deepFreeze(values[i])) as R);
  });
  return out;
}

/** A write to cached documents whose new copies replace the old (writeThrough). */
export interface CacheWrite<T extends Document> {
  /**
   * Makes the write, on the collection without the cache's drops; resolves true when it changed
   * every document exactly as `apply` says.
   */
  write: (raw: Collection<T>) => Promise<boolean>;
  /**
   * A document after the write from its cached copy (the stored view's) taken beside it, or null
   * when the copy cannot be shown to be from before the write: that document is then read again.
   */
  apply?: (copy: T) => T | null;
}

/**
 * Makes a write to the documents of `ids` and puts their new copies in `view`, and the views it is
 * derived from, in place of the old ones: readers see the old copy until the new one is there,
 * never a miss. The usual path, a write that drops the copies and a read that refills them, is six
 * round trips in a row (write, drop, read the generations, find, fill); this is three, the
 * generations read beside the write, or two when `apply` makes the new documents from the cached
 * copies read with them. It is as safe: a copy is replaced only if no other write dropped it since
 * its generation was read (before the find, or with the copy `apply` started from), and the
 * replacement bumps the generation, so a reader that read the document before the write cannot
 * put its old copy back. A copy that cannot be replaced is dropped. ADR 0021.
 */
export async function writeThrough<T extends Document, R>(
  core: Core,
  view: DocView<T, R>,
  ids: readonly bigint[],
  change: CacheWrite<T>,
): Promise<void> {
  const name = view.collection.name;
  const raw = core.db.collection<T>(name);
  const redis = redisOf.get(core.db);
  const unique = [...new Set(ids)];
  if (!redis) {
    await change.write(raw).finally(() => countWrite(core.db, name));
    return;
  }
  const chain: DocView<T, unknown>[] = [];
  for (let v: DocView<T, unknown> | undefined = view; v; v = v.base) chain.unshift(v);
  const stored = chain[0]!;
  const copyView = change.apply && !stored.derive ? stored.name : null;
  let applied: boolean;
  let before: Map<bigint, Generation>;
  try {
    [applied, before] = await Promise.all([change.write(raw), generationsOf(redis, name, unique, copyView)]);
  } catch (err) {
    // Part of a failed write may have been made: its copies go as any write's do.
    await drop(core.db, redis, name, unique);
    throw err;
  } finally {
    countWrite(core.db, name);
  }
  dropLocal(core.db, name, unique);
  const docs: { _id: bigint }[] = [];
  const unknown: bigint[] = [];
  for (const id of unique) {
    const copy = applied && change.apply ? before.get(id)?.copy : null;
    const after = copy ? change.apply!(BSON.deserialize(copy, { useBigInt64: true }) as T) : null;
    if (after) docs.push(after as unknown as { _id: bigint });
    else unknown.push(id);
  }
  if (unknown.length > 0) docs.push(...(await findForView(core, stored, unknown).catch(() => [])));
  const fields = new Map<bigint, (string | Buffer)[]>(unique.map((id) => [id, []]));
  const now = Date.now();
  try {
    let values: unknown[] = docs;
    for (const v of chain) {
      if (v.derive) values = await v.derive(core, values as T[]);
      docs.forEach((doc, i) => fields.get(doc._id)?.push(v.name, cachedValue(v, doc, values[i])));
      if (v.derive && v.localTtlMs) {
        const local = localOf(core.db, name, v.name, v.localTtlMs);
        docs.forEach((doc, i) => local.set(doc._id, values[i], now));
      }
    }
  } catch (err) {
    core.logger.debug({ err, collection: name }, 'copies not rendered after a write: dropped');
    for (const f of fields.values()) f.length = 0;
  }
  const pipe = batch(redis);
  for (const [id, f] of fields) {
    // A document the find did not return (deleted, or the find failed) is dropped.
    pipe.eval(
      REPLACE,
      2,
      docKey(name, id),
      generationKey(name, id),
      before.get(id)?.generation ?? '\u0000',
      GENERATION_TTL_MS,
      ENTRY_TTL_SECONDS,
      ...f,
    );
  }
  // A failed replacement leaves the old copies until they expire, as a failed drop does.
  await pipe.exec().catch(() => undefined);
}

/** A document's generation as read ('\u0000' where unreadable), and its copy when asked for. */
interface Generation {
  generation: string;
  copy: Buffer | null;
}

/**
 * The generations of the documents of `ids` ('\u0000' where unreadable: never matches, no fill),
 * and with `copyView` each one's copy in that view, read after its generation.
 */
async function generationsOf(
  redis: Redis,
  name: string,
  ids: readonly bigint[],
  copyView: string | null = null,
): Promise<Map<bigint, Generation>> {
  const pipe = batch(redis);
  for (const id of ids) {
    pipe.get(generationKey(name, id));
    if (copyView) pipe.hgetBuffer(docKey(name, id), copyView);
  }
  const replies = await pipe.exec().catch(() => null);
  const step = copyView ? 2 : 1;
  return new Map(
    ids.map((id, i) => {
      const [err, value] = replies?.[i * step] ?? [new Error('no reply'), null];
      const [copyErr, copy] = copyView ? (replies?.[i * step + 1] ?? [new Error('no reply'), null]) : [null, null];
      return [
        id,
        {
          generation: err ? '\u0000' : ((value as string | null) ?? ''),
          copy: !err && !copyErr && Buffer.isBuffer(copy) && copy.length > 0 ? copy : null,
        },
      ];
    }),
  );
}

/** The documents of `ids` as `view` projects them, from MongoDB. */
function findForView<T extends Document>(
  core: Core,
  view: DocView<T, unknown>,
  ids: readonly bigint[],
): Promise<{ _id: bigint }[]> {
  const projection = Object.keys(view.projection).length > 0 ? { projection: view.projection } : {};
  return core.db
    .collection<{ _id: bigint }>(view.collection.name)
    .find({ _id: { $in: [...ids] } }, projection)
    .toArray();
}

/** Queues the fill of `view`'s copy of each of `docs` (its value at the same index), generation checked. */
function fillAll<T extends Document>(
  pipe: ReturnType<typeof batch>,
  view: DocView<T, unknown>,
  docs: readonly { _id: bigint }[],
  values: readonly unknown[],
  generationOf: ReadonlyMap<bigint, Generation>,
): void {
  const name = view.collection.name;
  docs.forEach((doc, i) => {
    const generation = generationOf.get(doc._id)?.generation;
    if (generation === undefined) return;
    const value = cachedValue(view, doc, values[i]);
    pipe.eval(
      FILL,
      2,
      docKey(name, doc._id),
      generationKey(name, doc._id),
      view.name,
      value,
      ENTRY_TTL_SECONDS,
      generation,
    );
  });
}

/** What `view` stores of `doc` in Redis: its derived value as JSON, or the projected document as BSON. */
function cachedValue<T extends Document>(view: DocView<T, unknown>, doc: object, value: unknown): string | Buffer {
  return view.derive ? JSON.stringify(value) : Buffer.from(BSON.serialize(doc));
}

/** Drops this process's own copies of `ids`. */
function dropLocal(db: Db, collection: string, ids: readonly unknown[]): void {
  let counts = localDrops.get(db);
  if (!counts) localDrops.set(db, (counts = new Map()));
  counts.set(collection, (counts.get(collection) ?? 0) + 1);
  for (const local of locals.get(db)?.get(collection)?.values() ?? [])
    for (const id of ids) if (typeof id === 'bigint') local.delete(id);
}

/** Drops the cached copies of `ids` and keeps reads that began before out of the cache. */
async function drop(db: Db, redis: Redis, collection: string, ids: readonly unknown[]): Promise<void> {
  dropLocal(db, collection, ids);
  const pipe = batch(redis);
  for (const id of ids) {
    if (typeof id !== 'bigint') continue;
    pipe.incr(generationKey(collection, id));
    pipe.pexpire(generationKey(collection, id), GENERATION_TTL_MS);
    pipe.del(docKey(collection, id));
  }
  // A failed drop must not fail the write that already happened: the entry's expiry bounds it.
  if (pipe.length > 0) await pipe.exec().catch(() => undefined);
}

async function touchedIds(coll: Collection<Document>, filters: Filter<Document>[]): Promise<unknown[]> {
  const ids: unknown[] = [];
  for (const f of filters) {
    const direct = namedValues(f, '_id');
    if (direct) ids.push(...direct);
    else ids.push(...(await coll.find(f, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
  }
  return ids;
}

const wrapped = new WeakMap<Db, Map<string, Collection<Document>>>();

/** `coll` with cache-dropping writes, when `db` has a cache installed; `coll` itself otherwise. */
export function withDocCache<T extends Document>(db: Db, coll: Collection<T>): Collection<T> {
  const redis = redisOf.get(db);
  if (!redis) return withWriteCount(db, coll);
  let byName = wrapped.get(db);
  if (!byName) wrapped.set(db, (byName = new Map()));
  const hit = byName.get(coll.collectionName);
  if (hit) return hit as unknown as Collection<T>;
  const raw = coll as unknown as Collection<Document>;
  const proxy = new Proxy(raw, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      const method = isWriteMethod(prop)
        ? countingWrite(db, target.collectionName, prop, value as (...args: unknown[]) => Promise<unknown>, target)
        : (value as (...args: unknown[]) => Promise<unknown>);
      if (isFilteredWrite(prop)) {
        return async (...args: unknown[]) => {
          const ids = await touchedIds(target, [(args[0] ?? {}) as Filter<Document>]);
          try {
            return await method.apply(target, args);
          } finally {
            await drop(db, redis, target.collectionName, ids);
          }
        };
      }
      if (prop === 'bulkWrite') {
        return async (...args: unknown[]) => {
          const ops = (args[0] ?? []) as BulkOp[];
          const filters = ops.flatMap((op) =>
            [op.updateOne, op.updateMany, op.replaceOne, op.deleteOne, op.deleteMany]
              .filter((o) => o !== undefined)
              .map((o) => o.filter),
          );
          const ids = await touchedIds(target, filters);
          try {
            return await method.apply(target, args);
          } finally {
            await drop(db, redis, target.collectionName, ids);
          }
        };
      }
      return isWriteMethod(prop) ? method : method.bind(target);
    },
  });
  byName.set(coll.collectionName, proxy);
  return proxy as unknown as Collection<T>;
}
