// The MongoDB-wire server under test answers planned queries exactly as a full scan would: the same
// documents are inserted into an indexed and an unindexed collection and every query must return
// the same result from both (order included where the sort is total). Runs against whatever server
// the tests use (the embedded default, or a real mongod named by MONGO_URL).
import type { Collection, Db, Document, MongoClient } from 'mongodb';
import { connectMongo, isDuplicateKeyError } from '../../../services/core/db/mongo.ts';
import { testConfig } from '../../support/config.ts';

interface Doc extends Document {
  _id: bigint;
  accountId: bigint | null;
  tags?: string[];
  score: number;
  name: string | null;
  createdAt: Date;
}

let client: MongoClient;
let db: Db;
let indexed: Collection<Doc>;
let plain: Collection<Doc>;

function makeDocs(n: number): Doc[] {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const tagPool = ['a', 'b', 'c', 'Ünïcode', 'long-tag-name'];
  const docs: Doc[] = [];
  for (let i = 0; i < n; i++) {
    const doc: Doc = {
      _id: (BigInt(1_790_000_000_000 + i * 13) << 16n) | BigInt(i % 7),
      accountId: i % 17 === 0 ? null : BigInt(1 + Math.floor(rnd() * 40)),
      score: i % 5 === 0 ? Math.floor(rnd() * 10) : rnd() * 10,
      name: i % 11 === 0 ? null : `n${Math.floor(rnd() * 30)}`,
      createdAt: new Date(1_790_000_000_000 + i * 1000),
    };
    if (i % 3 !== 0) doc.tags = tagPool.filter(() => rnd() < 0.4);
    docs.push(doc);
  }
  return docs;
}

beforeAll(async () => {
  ({ client, db } = await connectMongo(testConfig().mongoUrl));
  indexed = db.collection<Doc>('indexed');
  plain = db.collection<Doc>('plain');
  await indexed.createIndexes([
    { key: { accountId: 1, _id: -1 }, name: 'account' },
    { key: { tags: 1, _id: -1 }, name: 'tags' },
    { key: { name: 1, score: 1 }, name: 'name_score' },
    { key: { createdAt: -1 }, name: 'created' },
  ]);
  const docs = makeDocs(3000);
  await indexed.insertMany(docs.map((d) => ({ ...d })));
  await plain.insertMany(docs.map((d) => ({ ...d })));
});

afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

const ids = (docs: { _id: bigint }[]) => docs.map((d) => d._id.toString());

/** Whole documents and both kinds of projection (the server builds a projected answer apart). */
const PROJECTIONS: (Document | undefined)[] = [undefined, { score: 1, tags: 1 }, { name: 0, createdAt: 0 }];

async function same(filter: Document, sort?: Document, skip = 0, limit = 0): Promise<number> {
  let n = 0;
  for (const projection of PROJECTIONS) {
    const run = (c: Collection<Doc>) => {
      let cursor = c.find(filter, projection ? { projection } : {});
      if (sort) cursor = cursor.sort(sort);
      return cursor.skip(skip).limit(limit).toArray();
    };
    const [a, b] = await Promise.all([run(indexed), run(plain)]);
    const byId = (docs: Doc[]) => (sort ? docs : [...docs].sort((x, y) => (x._id < y._id ? -1 : 1)));
    expect(byId(a)).toEqual(byId(b));
    n = a.length;
  }
  return n;
}

test('a scan in reverse natural order returns the documents last inserted first', async () => {
  // The documents were inserted in ascending _id order, which is also the embedded store's key order.
  const reversed = await plain.find({ accountId: 7n }).sort({ $natural: -1 }).toArray();
  const byId = await indexed.find({ accountId: 7n }).sort({ _id: -1 }).toArray();
  expect(reversed.length).toBeGreaterThan(10);
  expect(ids(reversed)).toEqual(ids(byId));
});

test('equality, $in, ranges and sorts on indexed fields match a full scan', async () => {
  const cases: [Document, Document | undefined, number, number][] = [
    [{ accountId: 7n }, { _id: -1 }, 0, 20],
    [{ accountId: 7n }, { _id: 1 }, 5, 10],
    [{ accountId: 7n, _id: { $lt: (1_790_000_000_000n + 20_000n) << 16n } }, { _id: -1 }, 0, 20],
    [{ accountId: { $in: [3n, 9n, 27n] } }, { _id: -1 }, 0, 15],
    [{ accountId: { $in: [3n, 9n, 27n] } }, undefined, 0, 0],
    [{ accountId: null }, { _id: 1 }, 0, 0],
    [{ accountId: 12, score: { $gte: 5 } }, { _id: -1 }, 0, 0],
    [{ tags: 'b' }, { _id: -1 }, 0, 25],
    [{ tags: { $in: ['a', 'Ünïcode'] } }, { _id: 1 }, 0, 0],
    [{ tags: { $exists: false } }, { _id: 1 }, 0, 0],
    [{ name: 'n3' }, { score: 1, _id: 1 }, 0, 0],
    [{ name: 'n3', score: { $gt: 2, $lte: 7 } }, { score: -1, _id: 1 }, 0, 0],
    [{ name: { $gte: 'n1', $lt: 'n2' } }, { name: 1, score: 1, _id: 1 }, 0, 0],
    [{ name: null }, undefined, 0, 0],
    [{ createdAt: { $gte: new Date(1_790_000_100_000) } }, { createdAt: -1 }, 0, 30],
    [{}, { createdAt: 1 }, 10, 10],
    [{}, { _id: -1 }, 0, 20],
    [{ _id: { $gt: (1_790_000_000_000n + 30_000n) << 16n } }, { _id: 1 }, 0, 10],
    [{ $and: [{ accountId: 5n }, { score: { $lt: 5 } }] }, { _id: -1 }, 0, 0],
    [{ $or: [{ accountId: 5n }, { accountId: 6n }] }, { _id: -1 }, 0, 0],
    [{ accountId: 5n, $or: [{ name: 'n1' }, { tags: 'c' }] }, { _id: 1 }, 0, 0],
  ];
  let total = 0;
  for (const [filter, sort, skip, limit] of cases) total += await same(filter, sort, skip, limit);
  expect(total).toBeGreaterThan(500);
});

test('a filter of _id values alone is answered from the primary map; any other condition is still checked', async () => {
  const all = await plain.find({}).sort({ _id: 1 }).toArray();
  const [a, b, c] = [all[10], all[20], all[30]];
  const found = async (filter: Document) =>
    ids(await indexed.find(filter).sort({ _id: 1 }).toArray()).concat(
      ids(
        await indexed
          .find(filter, { projection: { score: 1 } })
          .sort({ _id: 1 })
          .toArray(),
      ),
    );
  const twice = (docs: Doc[]) => [...ids(docs), ...ids(docs)];
  expect(await found({ _id: a._id })).toEqual(twice([a]));
  expect(await found({ _id: { $eq: b._id } })).toEqual(twice([b]));
  expect(await found({ _id: { $in: [c._id, a._id, 1n] } })).toEqual(twice([a, c]));
  expect(await found({ _id: { $in: [a._id, b._id, c._id], $ne: b._id } })).toEqual(twice([a, c]));
  expect(await found({ _id: a._id, score: a.score + 1 })).toEqual([]);
  expect(await found({ _id: { $in: [a._id, b._id] }, accountId: b.accountId })).toEqual(
    twice([a, b].filter((d) => d.accountId === b.accountId)),
  );
});

test('projected reads racing updates of the same document never see half an update', async () => {
  const race = db.collection<{ _id: bigint; a: number; b: number; pad: string[] }>('race');
  await race.insertOne({ _id: 1n, a: 0, b: 0, pad: ['x'] });
  const writes = Array.from({ length: 200 }, (_, i) =>
    race.updateOne({ _id: 1n }, { $set: { a: i + 1, b: i + 1 }, $push: { pad: `p${i}` } }),
  );
  const reads = Array.from({ length: 200 }, () => race.findOne({ _id: 1n }, { projection: { a: 1, b: 1, pad: 1 } }));
  const [, seen] = await Promise.all([Promise.all(writes), Promise.all(reads)]);
  for (const d of seen) {
    expect(d!.a).toBe(d!.b);
    expect(new Set(d!.pad).size).toBe(d!.pad.length); // a list read whole, never mid-append
  }
  const last = await race.findOne({ _id: 1n }, { projection: { a: 1, b: 1, pad: 1 } });
  expect(last!.a).toBe(last!.b);
  expect(last!.pad).toHaveLength(201);
});

test('_id lookups: single, $in (also with numbers of another type) and missing ids', async () => {
  const [first] = await plain.find({}).sort({ _id: 1 }).limit(1).toArray();
  expect(first).toBeDefined();
  await same({ _id: first!._id });
  const some = (await plain.find({}).limit(40).toArray()).map((d) => d._id);
  expect(await same({ _id: { $in: [...some, 42n] } })).toBe(40);
  // Stored as int32, asked for as int64: equal numbers match, as in MongoDB.
  const small = db.collection<{ _id: number | bigint }>('small_ids');
  await small.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
  expect(await small.countDocuments({ _id: { $in: [1n, 3n] } })).toBe(2);
});

test('a unique index whose every field the filter pins is looked up by key, answering as a scan does', async () => {
  interface Pair extends Document {
    _id: bigint;
    ownerId: bigint;
    targetId?: bigint | number | null;
    flag: boolean;
  }
  const keyed = db.collection<Pair>('pairs_keyed');
  const scanned = db.collection<Pair>('pairs_scanned');
  // As follows are indexed: one record per (owner, target), and the owner's records newest first.
  await keyed.createIndexes([
    { key: { ownerId: 1, targetId: 1 }, name: 'owner_target', unique: true },
    { key: { ownerId: 1, _id: -1 }, name: 'owner' },
  ]);
  const pairs: Pair[] = [];
  for (let owner = 1n; owner <= 3n; owner++)
    for (let target = 1; target <= 200; target += Number(owner))
      pairs.push({
        _id: owner * 1000n + BigInt(target),
        ownerId: owner,
        targetId: BigInt(target),
        flag: target % 2 === 0,
      });
  pairs.push({ _id: 9001n, ownerId: 1n, targetId: 500 as number, flag: true }); // stored as int32
  pairs[0] = { ...pairs[0]!, targetId: 700 as number };
  pairs.push({ _id: 9002n, ownerId: 2n, targetId: null, flag: false });
  pairs.push({ _id: 9003n, ownerId: 3n, flag: false }); // no target at all
  await keyed.insertMany(pairs.map((d) => ({ ...d })));
  await scanned.insertMany(pairs.map((d) => ({ ...d })));
  const agree = async (filter: Document, sort?: Document, limit = 0) => {
    const run = (c: typeof keyed) => {
      let cursor = c.find(filter);
      if (sort) cursor = cursor.sort(sort);
      return cursor.limit(limit).toArray();
    };
    const [a, b] = await Promise.all([run(keyed), run(scanned)]);
    const order = (docs: Pair[]) => (sort ? docs : [...docs].sort((x, y) => (x._id < y._id ? -1 : 1)));
    expect(ids(order(a))).toEqual(ids(order(b)));
    return a.length;
  };
  const forty = Array.from({ length: 40 }, (_, k) => BigInt(k * 5 + 1)).concat([500n, 700n, 999n]);
  expect(await agree({ ownerId: 1n, targetId: { $in: forty } })).toBe(41);
  expect(await agree({ ownerId: 2n, targetId: { $in: forty } })).toBe(20);
  expect(await agree({ ownerId: 1n, targetId: { $in: forty } }, { _id: -1 }, 5)).toBe(5);
  expect(await agree({ ownerId: { $in: [1n, 2n, 3n] }, targetId: { $in: [1n, 4n, 7n, 10n] } })).toBe(9);
  expect(await agree({ ownerId: 1n, targetId: 500n })).toBe(1);
  expect(await agree({ ownerId: 1n, targetId: 8 })).toBe(1);
  expect(await agree({ ownerId: 1n, targetId: { $in: forty }, flag: true })).toBeGreaterThan(0);
  // Pinned by the key but with another condition beside it: the candidates are still matched.
  expect(await agree({ ownerId: 1n, targetId: { $in: forty, $ne: 6n } })).toBe(40);
  expect(await agree({ ownerId: 2n, targetId: null })).toBe(1);
  expect(await agree({ ownerId: 3n, targetId: { $in: [null, 4n] } })).toBe(2);
  expect(await agree({ ownerId: 4n, targetId: 1n })).toBe(0);
  // Writes move and drop keys: the lookups follow them.
  for (const c of [keyed, scanned]) {
    await c.updateOne({ _id: 1000n + 11n }, { $set: { targetId: 5000n } });
    await c.deleteOne({ _id: 1000n + 21n });
  }
  expect(await agree({ ownerId: 1n, targetId: { $in: [11n, 21n, 5000n] } })).toBe(1);
});

test('countDocuments (an aggregation) agrees with the scan, with skip and limit', async () => {
  for (const filter of [{ accountId: 7n }, { tags: 'a' }, { accountId: 999n }, {}]) {
    expect(await indexed.countDocuments(filter)).toBe(await plain.countDocuments(filter));
    expect(await indexed.countDocuments(filter, { limit: 1 })).toBe(await plain.countDocuments(filter, { limit: 1 }));
    expect(await indexed.countDocuments(filter, { skip: 3, limit: 5 })).toBe(
      await plain.countDocuments(filter, { skip: 3, limit: 5 }),
    );
  }
});

test('updates and deletes keep the indexes right', async () => {
  const coll = db.collection<Doc>('moves');
  await coll.createIndex({ accountId: 1, _id: -1 }, { name: 'account' });
  await coll.createIndex({ tags: 1 }, { name: 'tags' });
  await coll.insertMany([
    { _id: 1n, accountId: 1n, tags: ['x', 'y'], score: 0, name: null, createdAt: new Date() },
    { _id: 2n, accountId: 1n, tags: ['y'], score: 0, name: null, createdAt: new Date() },
  ]);
  await coll.updateOne({ _id: 1n }, { $set: { accountId: 2n, tags: ['z'] } });
  expect(ids(await coll.find({ accountId: 1n }).toArray())).toEqual(['2']);
  expect(ids(await coll.find({ accountId: 2n }).toArray())).toEqual(['1']);
  expect(ids(await coll.find({ tags: 'y' }).toArray())).toEqual(['2']);
  expect(ids(await coll.find({ tags: 'z' }).toArray())).toEqual(['1']);
  await coll.deleteOne({ _id: 2n });
  expect(await coll.find({ accountId: 1n }).toArray()).toEqual([]);
  expect(await coll.find({ tags: 'y' }).toArray()).toEqual([]);
  await coll.findOneAndUpdate({ accountId: 2n }, { $set: { accountId: 3n } });
  expect(ids(await coll.find({ accountId: 3n }).toArray())).toEqual(['1']);
});

test('500 concurrent $inc on one document lose none; unique indexes hold under concurrency', async () => {
  const coll = db.collection('counters');
  await coll.insertOne({ _id: 'c', n: 0 } as unknown as Document);
  await Promise.all(Array.from({ length: 500 }, () => coll.updateOne({ _id: 'c' } as Document, { $inc: { n: 1 } })));
  expect((await coll.findOne({ _id: 'c' } as Document))?.n).toBe(500);

  const claims = db.collection('claims');
  await claims.createIndex({ key: 1 }, { unique: true, name: 'key' });
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => claims.insertOne({ _id: BigInt(i + 1), key: 'same' } as Document)),
  );
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of results) if (r.status === 'rejected') expect(isDuplicateKeyError(r.reason)).toBe(true);
});

test('concurrent findOneAndUpdate each answer with their own result (returnDocument: after)', async () => {
  const coll = db.collection<{ _id: string; seq: bigint }>('sequences');
  const results = await Promise.all(
    Array.from({ length: 200 }, () =>
      coll.findOneAndUpdate({ _id: 's' }, { $inc: { seq: 1n } }, { upsert: true, returnDocument: 'after' }),
    ),
  );
  const seen = results.map((r) => r?.seq);
  expect(new Set(seen).size).toBe(200);
  expect(seen.sort((a, b) => Number((a ?? 0n) - (b ?? 0n)))[199]).toBe(200n);
});
