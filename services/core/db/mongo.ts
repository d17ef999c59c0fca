// MongoDB access. Ids are BSON Long (int64) and surface in TypeScript as bigint (`useBigInt64`),
// so they sort as numbers and print as exact decimal strings.
// Collections declare their indexes next to their definition (see model/*); `ensureIndexes`
// creates them all at start-up. Only features real MongoDB 7+ and the embedded default
// (deploy/local/mongo) both have are used: no transactions, change streams, $text, TTL or partial
// indexes, no aggregation operators newer than MongoDB 4.4.
import { writeFileSync } from 'node:fs';
import { withDocCache } from './docCache.ts';
import { scopeInserts, withWriteCount } from './recentResults.ts';
import { withGroupDrops } from './groupCache.ts';
import {
  MongoClient,
  type Db,
  type Collection,
  type Document,
  type Filter,
  type IndexDescription,
  type OptionalUnlessRequiredId,
} from 'mongodb';

export interface CollectionDef<T extends Document> {
  name: string;
  indexes: IndexDescription[];
  /** Documents are cached by `_id` in Redis (docCache.ts), so every write drops the copies it touches. */
  cachedById?: boolean;
  /**
   * What is derived from the documents sharing a value of this field is cached in Redis
   * (groupCache.ts), so every write drops the entries of the values it touches (and is counted).
   */
  cachedBy?: string;
  /** Writes are counted, so that results kept in this process see them (recentResults.ts). */
  countWrites?: boolean;
  /**
   * Inserts may carry their events' outbox records in the document (`outbox`, events/outbox.ts
   * writeCarried): the relay looks for them here, by the `outbox_lease` index this adds.
   */
  carriesOutbox?: boolean;
  /** Phantom: the document type of the collection. */
  readonly _doc?: T;
}

const registry = new Map<string, CollectionDef<Document>>();

/** Declares a collection and its indexes. Call at module level in services/core/model. */
export function defineCollection<T extends Document>(
  name: string,
  indexes: IndexDescription[] = [],
  opts: {
    cachedById?: boolean;
    cachedBy?: string;
    countWrites?: boolean;
    /**
     * Inserts are counted per value of this field as well (recentResults.ts scopeInserts): a kept
     * result read with a filter naming values of it outlives inserts of other values.
     */
    insertsScopedBy?: string;
    carriesOutbox?: boolean;
  } = {},
): CollectionDef<T> {
  // Names make ensureIndexes idempotent (it skips existing indexes by name).
  const unnamed = indexes.find((i) => !i.name);
  if (unnamed) throw new Error(`index on ${name} ${JSON.stringify(unnamed.key)} needs a name`);
  const def: CollectionDef<T> = {
    name,
    // Sparse: only documents whose events are not published yet are in it.
    indexes: opts.carriesOutbox
      ? [...indexes, { key: { 'outbox.leaseUntil': 1 }, name: 'outbox_lease', sparse: true }]
      : indexes,
    cachedById: opts.cachedById ?? false,
    cachedBy: opts.cachedBy,
    countWrites: opts.countWrites ?? false,
    carriesOutbox: opts.carriesOutbox ?? false,
  };
  if (opts.insertsScopedBy !== undefined) scopeInserts(name, opts.insertsScopedBy);
  registry.set(name, def as CollectionDef<Document>);
  return def;
}

/** The collections whose inserts may carry outbox records (the relay's second place to look). */
export function outboxCarriers(): CollectionDef<Document>[] {
  return [...registry.values()].filter((d) => d.carriesOutbox);
}

/** Per database: the driver's handle of each collection, made once (the driver resolves its options anew per call). */
const handles = new WeakMap<Db, Map<string, Collection<Document>>>();

export function collection<T extends Document>(db: Db, def: CollectionDef<T>): Collection<T> {
  let byName = handles.get(db);
  if (!byName) handles.set(db, (byName = new Map()));
  let coll = byName.get(def.name) as Collection<T> | undefined;
  if (!coll) byName.set(def.name, (coll = db.collection<T>(def.name)) as unknown as Collection<Document>);
  if (def.cachedById) return withDocCache(db, coll);
  if (def.cachedBy) return withGroupDrops(db, coll, def.cachedBy);
  return def.countWrites ? withWriteCount(db, coll) : coll;
}

export async function connectMongo(url: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(url, {
    useBigInt64: true,
    ignoreUndefined: true,
    serverSelectionTimeoutMS: 10_000,
    // Bounds a (monitoring) connection's connect and handshake: a server that accepts but does not
    // answer while it starts must not hold the monitor for the default 30 s.
    connectTimeoutMS: 10_000,
    appName: 'fedisrv',
    monitorCommands: !!process.env.MONGO_COMMAND_COUNTS,
  });
  if (process.env.MONGO_COMMAND_COUNTS) countCommands(client, process.env.MONGO_COMMAND_COUNTS);
  await client.connect();
  return { client, db: client.db() };
}

/** Whether MongoDB answers a ping on a new connection of its own (closed again at once). */
export async function mongoAnswers(url: string, timeoutMs = 5_000): Promise<boolean> {
  const probe = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs });
  try {
    await probe.connect();
    await probe.db().command({ ping: 1 }, { timeoutMS: timeoutMs });
    return true;
  } catch {
    return false;
  } finally {
    await probe.close().catch(() => undefined);
  }
}

/**
 * A benchmark's look at the round trips (`MONGO_COMMAND_COUNTS=<file>`): this process's commands
 * by name and collection, written to the file every second (the api benchmark prints them per post).
 */
function countCommands(client: MongoClient, file: string): void {
  const counts: Record<string, number> = {};
  client.on('commandStarted', (e) => {
    const coll = (e.command as Record<string, unknown>)[e.commandName];
    const key = `${e.commandName} ${typeof coll === 'string' ? coll : ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  });
  const timer = setInterval(() => writeFileSync(file, JSON.stringify(counts)), 1000).unref();
  client.once('topologyClosed', () => clearInterval(timer));
}

/**
 * Creates every declared index that does not exist yet; idempotent. Existing indexes are skipped by
 * name rather than re-declared: some stand-ins (FerretDB 1.x) drop the connection on a repeated
 * createIndexes.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  const existingCollections = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  for (const def of registry.values()) {
    if (!existingCollections.has(def.name)) {
      await db.createCollection(def.name).catch((err: { codeName?: string }) => {
        if (err.codeName !== 'NamespaceExists') throw err;
      });
    }
    if (def.indexes.length === 0) continue;
    const coll = db.collection(def.name);
    const present = new Set((await coll.indexes()).map((i) => i.name));
    const missing = def.indexes.filter((i) => !present.has(i.name as string));
    if (missing.length > 0) await coll.createIndexes(missing);
  }
}

export function declaredCollections(): string[] {
  return [...registry.keys()];
}

/** True when a write failed on a unique index. */
export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

/**
 * Inserts `doc` unless a unique index says it is there already (a repeat, or a concurrent writer
 * first); true when this call stored it. Any other write error is thrown.
 */
export async function insertOnce<T extends Document>(
  coll: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
): Promise<boolean> {
  try {
    await coll.insertOne(doc);
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return false;
  }
}

/** Inserts `doc`; when a unique index says it is there already, throws `taken()` instead. */
export async function insertUnique<T extends Document>(
  coll: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
  taken: () => Error,
): Promise<void> {
  try {
    await coll.insertOne(doc);
  } catch (err) {
    throw isDuplicateKeyError(err) ? taken() : err;
  }
}

/**
 * Inserts `doc` and answers it, or, when a concurrent writer stored its twin first (a duplicate
 * key), answers theirs: the document `twin` finds.
 */
export async function insertOrTwin<T extends Document>(
  coll: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
  twin: Filter<T>,
): Promise<T> {
  try {
    await coll.insertOne(doc);
    return doc as T;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const winner = await coll.findOne(twin);
    if (!winner) throw err;
    return winner as T;
  }
}

/**
 * Inserts `docs` unordered and answers those this call stored: the ones a concurrent writer stored
 * first (duplicate keys, e.g. another consumer after a rebalance) are left out. Any other write
 * error is thrown.
 */
export async function insertNew<T>(
  coll: { insertMany(docs: T[], options: { ordered: false }): Promise<unknown> },
  docs: T[],
): Promise<T[]> {
  try {
    await coll.insertMany(docs, { ordered: false });
    return docs;
  } catch (err) {
    const writeErrors = (err as { writeErrors?: Array<{ index: number; code?: number }> }).writeErrors;
    if (!writeErrors || writeErrors.some((e) => e.code !== 11000)) throw err;
    const lost = new Set(writeErrors.map((e) => e.index));
    return docs.filter((_, k) => !lost.has(k));
  }
}
