// MongoDB access. Ids are BSON Long (int64) and surface in TypeScript as bigint (`useBigInt64`),
// so they sort as numbers and print as exact decimal strings.
// Collections declare their indexes next to their definition (see model/*); `ensureIndexes`
// creates them all at start-up. Only features real MongoDB 7+ and FerretDB both have are used:
// no transactions, change streams, $text, TTL or partial indexes.
import { MongoClient, type Db, type Collection, type Document, type IndexDescription } from 'mongodb';

export interface CollectionDef<T extends Document> {
  name: string;
  indexes: IndexDescription[];
  /** Phantom: the document type of the collection. */
  readonly _doc?: T;
}

const registry = new Map<string, CollectionDef<Document>>();

/** Declares a collection and its indexes. Call at module level in services/core/model. */
export function defineCollection<T extends Document>(name: string, indexes: IndexDescription[] = []): CollectionDef<T> {
  const def: CollectionDef<T> = { name, indexes };
  registry.set(name, def as CollectionDef<Document>);
  return def;
}

export function collection<T extends Document>(db: Db, def: CollectionDef<T>): Collection<T> {
  return db.collection<T>(def.name);
}

export async function connectMongo(url: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(url, {
    useBigInt64: true,
    ignoreUndefined: true,
    serverSelectionTimeoutMS: 10_000,
    appName: 'fedisrv',
  });
  await client.connect();
  return { client, db: client.db() };
}

/** Creates every declared index; idempotent. */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const def of registry.values()) {
    if (def.indexes.length === 0) {
      await db.createCollection(def.name).catch((err: { codeName?: string }) => {
        if (err.codeName !== 'NamespaceExists') throw err;
      });
      continue;
    }
    await db.collection(def.name).createIndexes(def.indexes);
  }
}

export function declaredCollections(): string[] {
  return [...registry.keys()];
}

/** True when a write failed on a unique index. */
export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
