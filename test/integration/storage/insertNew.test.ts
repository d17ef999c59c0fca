// insertNew (services/core/db/mongo.ts), which every batch consumer uses to store what it was
// given when a concurrent consumer may have stored part of it first: on the real MongoDB-wire
// server, the documents whose keys already existed are left out of the answer, the rest stored,
// and any other write error is thrown. Likewise insertOnce and insertOrTwin, the one-document forms.
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { insertNew, insertOnce, insertOrTwin } from '../../../services/core/db/mongo.ts';

let core: Core;
beforeAll(async () => {
  ({ core } = await createTestCore());
});
afterAll(async () => {
  await closeTestCore(core);
});

test('documents a concurrent writer stored first are left out; the others are stored', async () => {
  const coll = core.db.collection<{ _id: number; by: string }>('insert_new_test');
  await coll.insertMany([
    { _id: 2, by: 'other' },
    { _id: 4, by: 'other' },
  ]);
  const ours = [1, 2, 3, 4, 5].map((_id) => ({ _id, by: 'us' }));
  expect((await insertNew(coll, ours)).map((d) => d._id)).toEqual([1, 3, 5]);
  const stored = await coll.find({}).sort({ _id: 1 }).toArray();
  expect(stored.map((d) => `${d._id}:${d.by}`)).toEqual(['1:us', '2:other', '3:us', '4:other', '5:us']);
  expect(await insertNew(coll, [{ _id: 6, by: 'us' }])).toEqual([{ _id: 6, by: 'us' }]);
});

test('a write error other than a duplicate key is thrown', async () => {
  const failing = {
    insertMany: async () => {
      throw Object.assign(new Error('disk full'), { writeErrors: [{ index: 0, code: 14031 }] });
    },
  };
  await expect(insertNew(failing, [{ _id: 1 }])).rejects.toThrow('disk full');
});

test('insertOnce stores a document once and says whether this call stored it', async () => {
  const coll = core.db.collection<{ _id: number; by: string }>('insert_once_test');
  expect(await insertOnce(coll, { _id: 1, by: 'first' })).toBe(true);
  expect(await insertOnce(coll, { _id: 1, by: 'second' })).toBe(false);
  expect(await coll.find({}).toArray()).toEqual([{ _id: 1, by: 'first' }]);
});

test('insertOrTwin answers the stored twin when a unique index already holds one', async () => {
  const coll = core.db.collection<{ _id: number; name: string }>('insert_or_twin_test');
  await coll.createIndex({ name: 1 }, { unique: true });
  expect(await insertOrTwin(coll, { _id: 1, name: 'a' }, { name: 'a' })).toEqual({ _id: 1, name: 'a' });
  expect(await insertOrTwin(coll, { _id: 2, name: 'a' }, { name: 'a' })).toEqual({ _id: 1, name: 'a' });
  expect(await insertOrTwin(coll, { _id: 3, name: 'b' }, { name: 'b' })).toEqual({ _id: 3, name: 'b' });
  // A duplicate whose twin the filter cannot find (here: the _id clash) is the write error it was.
  await expect(insertOrTwin(coll, { _id: 3, name: 'c' }, { name: 'c' })).rejects.toMatchObject({ code: 11000 });
});
