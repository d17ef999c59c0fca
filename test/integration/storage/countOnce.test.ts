// countOnce (services/core/db/countOnce.ts) on the real MongoDB-wire server: a counter change is
// applied once per mark however often it is sent, a write whose answer was lost (the connection
// closed after MongoDB applied it, as during a restart) is sent again and still counts once, and
// other failures are the caller's.
import { MongoNetworkError, type Collection } from 'mongodb';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { COUNT_MARKS_KEPT, countOnce, connectionFailed } from '../../../services/core/db/countOnce.ts';

interface Doc {
  _id: bigint;
  n: number;
  at?: string;
  countMarks?: string[];
}

let core: Core;
let coll: Collection<Doc>;
beforeAll(async () => {
  ({ core } = await createTestCore());
  coll = core.db.collection<Doc>('count_once_test');
});
afterAll(async () => {
  await closeTestCore(core);
});

test('a change sent twice counts once; other marks count each; only the latest marks are kept', async () => {
  await coll.insertOne({ _id: 1n, n: 0 });
  // True: every document changed, so the caller knows what they became (countedCopy).
  expect(await countOnce(coll, [{ _id: 1n, inc: { n: 1 }, set: { at: 'first' }, mark: 's+10' }])).toBe(true);
  expect(await countOnce(coll, [{ _id: 1n, inc: { n: 1 }, set: { at: 'again' }, mark: 's+10' }])).toBe(false);
  expect(await coll.findOne({ _id: 1n })).toMatchObject({ n: 1, at: 'first' });
  await countOnce(
    coll,
    Array.from({ length: COUNT_MARKS_KEPT + 5 }, (_, i) => ({ _id: 1n, inc: { n: 1 }, mark: `s+${100 + i}` })),
  );
  await countOnce(coll, [{ _id: 1n, inc: { n: -1 }, mark: 's-10' }]);
  const doc = await coll.findOne({ _id: 1n });
  expect(doc?.n).toBe(1 + COUNT_MARKS_KEPT + 5 - 1);
  expect(doc?.countMarks).toHaveLength(COUNT_MARKS_KEPT);
  expect(doc?.countMarks?.at(-1)).toBe('s-10');
});

test('a raised field only goes up: an older cause counted later does not move it back', async () => {
  await coll.insertOne({ _id: 4n, n: 0 });
  await countOnce(coll, [{ _id: 4n, inc: { n: 1 }, max: { at: '2026-11-30T10' }, mark: 's+31' }]);
  await countOnce(coll, [{ _id: 4n, inc: { n: 1 }, max: { at: '2026-11-30T09' }, mark: 's+30' }]);
  expect(await coll.findOne({ _id: 4n })).toMatchObject({ n: 2, at: '2026-11-30T10' });
});

test('a write applied whose answer was lost is sent again and counts once', async () => {
  await coll.insertOne({ _id: 2n, n: 0 });
  let sent = 0;
  // The real collection, whose first answer is lost after MongoDB applied the write.
  const losingFirstAnswer = new Proxy(coll, {
    get(target, prop, receiver) {
      if (prop !== 'bulkWrite') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<Collection<Doc>['bulkWrite']>) => {
        sent++;
        const result = await target.bulkWrite(...args);
        if (sent === 1) throw new MongoNetworkError('connection 3 to 127.0.0.1:27018 closed');
        return result;
      };
    },
  });
  await countOnce(losingFirstAnswer, [{ _id: 2n, inc: { n: 1 }, mark: 's+20' }], [1, 1]);
  expect(sent).toBe(2);
  expect((await coll.findOne({ _id: 2n }))?.n).toBe(1);
});

test('other failures are not retried; connection failures are told apart', async () => {
  await coll.insertOne({ _id: 3n, n: 0 });
  // $inc of a string field: MongoDB refuses the write itself.
  await coll.updateOne({ _id: 3n }, { $set: { at: 'text' } });
  await expect(countOnce(coll, [{ _id: 3n, inc: { at: 1 }, mark: 's+30' }], [1, 1])).rejects.toThrow();
  expect(connectionFailed(new MongoNetworkError('connection 8 closed'))).toBe(true);
  expect(connectionFailed(new Error('connect ECONNREFUSED 127.0.0.1:27017'))).toBe(true);
  expect(connectionFailed(new Error('E11000 duplicate key'))).toBe(false);
});
