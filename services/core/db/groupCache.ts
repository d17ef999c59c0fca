// A read-through cache in Redis of what is derived from all the documents of a collection that
// share one value of a field: the followers of an account (the `follows` sharing its
// `targetAccountId`), which every post's fan-out reads (ADR 0023). The document cache (docCache.ts)
// keys by `_id`; this keys by the field's value, with the same guarantees:
//
// - Every write through `collection()` to a collection declared `cachedBy` drops the entries of
//   the values it touches, found from the documents it inserts, from the field in its filter, or
//   by reading the matching documents' values just before the write. Callers need not remember.
// - A drop bumps the value's generation; a reader stores what it derived only if the generation is
//   still the one it read before its MongoDB read (one script), so a read that raced a write
//   cannot put the old answer back.
// - Entries expire after a few minutes, which bounds anything that still slipped through (a
//   failed Redis call).
import type { Collection, Db, Document, Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { batch, type Redis } from './redis.ts';
import { cacheRedisOf } from './docCache.ts';
import { countingWrite, isFilteredWrite, isWriteMethod, namedValues, type BulkOp } from './recentResults.ts';

const ENTRY_TTL_SECONDS = 300;
/** A generation outlives any read under way (a reader that finds none compares with ''). */
const GENERATION_TTL_MS = 600_000;

// The value is a Redis Cluster hash tag: an entry and its generation share a slot (FILL reads both).
const entryKey = (group: string, value: bigint) => `grp:${group}:{${value}}`;
const generationKey = (group: string, value: bigint) => `grp:${group}:{${value}}:g`;

const FILL = `if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

/** A group of documents by the value of one field: `follows` by `targetAccountId`. */
export interface CachedGroup {
  collection: string;
  field: string;
}

const groupName = (g: CachedGroup) => `${g.collection}.${g.field}`;

/**
 * What `derive` makes of each value's documents, from Redis where kept (`decode` of the stored
 * bytes), else derived and kept. One round trip reads the entries and, for those missing, the
 * generations the fills will check.
 */
export async function readGroups<V>(
  core: Core,
  group: CachedGroup,
  values: readonly bigint[],
  derive: (missing: bigint[]) => Promise<Map<bigint, V>>,
  codec: { encode: (v: V) => Buffer; decode: (b: Buffer) => V },
): Promise<Map<bigint, V>> {
  const out = new Map<bigint, V>();
  const unique = [...new Set(values)];
  if (unique.length === 0) return out;
  const redis = cacheRedisOf(core.db);
  if (!redis) return derive(unique);
  const name = groupName(group);
  const pipe = batch(redis);
  for (const v of unique) pipe.getBuffer(entryKey(name, v)).get(generationKey(name, v));
  const replies = await pipe.exec().catch(() => null);
  const missing: bigint[] = [];
  const generations = new Map<bigint, string>();
  unique.forEach((v, i) => {
    const [err, entry] = replies?.[2 * i] ?? [new Error('no reply'), null];
    if (!err && Buffer.isBuffer(entry) && entry.length > 0) return void out.set(v, codec.decode(entry));
    missing.push(v);
    const [genErr, generation] = replies?.[2 * i + 1] ?? [new Error('no reply'), null];
    // '\u0000' never matches a stored generation: an unreadable one fills nothing.
    if (!genErr) generations.set(v, (generation as string | null) ?? '');
  });
  if (missing.length === 0) return out;
  const derived = await derive(missing);
  const fill = batch(redis);
  for (const [v, value] of derived) {
    out.set(v, value);
    const generation = generations.get(v) ?? '\u0000';
    fill.eval(FILL, 2, entryKey(name, v), generationKey(name, v), generation, codec.encode(value), ENTRY_TTL_SECONDS);
  }
  await fill.exec().catch(() => undefined);
  return out;
}

/**
 * A list of ids, or null (a list too long to keep, say), as stored: a flag byte (1: null) and the
 * ids as 64-bit integers.
 */
export const idListCodec = {
  encode(list: readonly bigint[] | null): Buffer {
    if (list === null) return Buffer.from([1]);
    const out = Buffer.alloc(1 + 8 * list.length);
    list.forEach((id, i) => out.writeBigInt64LE(id, 1 + 8 * i));
    return out;
  },
  decode(b: Buffer): bigint[] | null {
    if (b[0] === 1) return null;
    const out: bigint[] = [];
    for (let at = 1; at + 8 <= b.length; at += 8) out.push(b.readBigInt64LE(at));
    return out;
  },
};

/** Drops the entries of `values` and keeps reads that began before out of the cache. */
async function dropGroups(redis: Redis, name: string, values: Iterable<unknown>): Promise<void> {
  const pipe = batch(redis);
  for (const v of new Set(values)) {
    if (typeof v !== 'bigint') continue;
    pipe.incr(generationKey(name, v));
    pipe.pexpire(generationKey(name, v), GENERATION_TTL_MS);
    pipe.del(entryKey(name, v));
  }
  // A failed drop must not fail the write that already happened: the entry's expiry bounds it.
  if (pipe.length > 0) await pipe.exec().catch(() => undefined);
}

/** The values of `field` a write's filter touches: named in it, or read from the matching documents. */
async function touchedValues(coll: Collection<Document>, field: string, filter: Filter<Document>): Promise<unknown[]> {
  const named = namedValues(filter, field);
  if (named) return named;
  const docs = await coll.find(filter, { projection: { _id: 0, [field]: 1 } }).toArray();
  return docs.map((d) => d[field] as unknown);
}

/**
 * The values an update or replacement sets the field to: a document moved to another group, or
 * inserted by an upsert whose filter does not name it.
 */
function setValues(update: Document | undefined, field: string): unknown[] {
  if (!update) return [];
  if (!Object.keys(update).some((k) => k.startsWith('$'))) return namedValues(update, field) ?? [];
  const set = update.$set as Document | undefined;
  const onInsert = update.$setOnInsert as Document | undefined;
  return [...(namedValues(set, field) ?? []), ...(namedValues(onInsert, field) ?? [])];
}

/** The values of `field` the write `method(...args)` is about to touch. */
async function valuesOfWrite(
  coll: Collection<Document>,
  field: string,
  method: string,
  args: unknown[],
): Promise<unknown[]> {
  if (method === 'insertOne') return [(args[0] as Document)[field]];
  if (method === 'insertMany') return (args[0] as Document[]).map((d) => d[field] as unknown);
  if (isFilteredWrite(method))
    return [
      ...(await touchedValues(coll, field, (args[0] ?? {}) as Filter<Document>)),
      ...setValues(args[1] as Document, field),
    ];
  const out: unknown[] = [];
  for (const op of (args[0] ?? []) as BulkOp[]) {
    if (op.insertOne) out.push(op.insertOne.document[field]);
    const filtered = op.updateOne ?? op.updateMany ?? op.replaceOne ?? op.deleteOne ?? op.deleteMany;
    if (filtered) out.push(...(await touchedValues(coll, field, filtered.filter)));
    out.push(...setValues(op.updateOne?.update ?? op.updateMany?.update ?? op.replaceOne?.replacement, field));
  }
  return out;
}

const wrapped = new WeakMap<Db, Map<string, unknown>>();

/**
 * `coll` whose every write drops the cached groups of `field`'s values it touches (and is counted
 * for recentResults.ts), when its database has a cache installed; otherwise only counted.
 */
export function withGroupDrops<T extends Document>(db: Db, coll: Collection<T>, field: string): Collection<T> {
  let byName = wrapped.get(db);
  if (!byName) wrapped.set(db, (byName = new Map()));
  const hit = byName.get(coll.collectionName);
  if (hit) return hit as Collection<T>;
  const name = groupName({ collection: coll.collectionName, field });
  const raw = coll as unknown as Collection<Document>;
  const proxy = new Proxy(raw, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      if (!isWriteMethod(prop)) return (value as (...args: unknown[]) => unknown).bind(target);
      const method = countingWrite(
        db,
        target.collectionName,
        prop,
        value as (...args: unknown[]) => Promise<unknown>,
        target,
      );
      return async (...args: unknown[]) => {
        const redis = cacheRedisOf(db);
        if (!redis) return method(...args);
        const values = await valuesOfWrite(target, field, prop, args);
        try {
          return await method(...args);
        } finally {
          await dropGroups(redis, name, values);
        }
      };
    },
  });
  byName.set(coll.collectionName, proxy);
  return proxy as unknown as Collection<T>;
}
