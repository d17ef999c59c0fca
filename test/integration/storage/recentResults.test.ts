// Results kept in the process for a moment (services/core/db/recentResults.ts) never outlive a
// write made through this process's `collection()`, to a counted collection (blocks) or a cached
// one (statuses), and expire after their time to live; the viewer's blockers and the newest public
// page follow blocks and posts at once.
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { recentResult } from '../../../services/core/db/recentResults.ts';
import { blocks } from '../../../services/core/model/blocks.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { favouriteStatus } from '../../../services/core/interactions/favourites.ts';
import { deleteStatus } from '../../../services/core/statuses/deleteStatus.ts';
import { blockersOf } from '../../../services/core/statuses/visibility.ts';
import { recordBlock } from '../../../services/core/graph/relations.ts';
import { pageIdsOf } from '../../../services/core/db/pages.ts';

let t: { core: Core };
beforeAll(async () => {
  t = await createTestCore();
});
afterAll(async () => {
  await closeTestCore(t.core);
});

test('a kept result is loaded again after a write to its collection, and after its time to live', async () => {
  let loads = 0;
  const load = async () => ++loads;
  const get = (key: string, ttl: number) => recentResult(t.core.db, key, [blocks], ttl, load);
  expect(await get('test:long', 60_000)).toBe(1);
  expect(await get('test:long', 60_000)).toBe(1);
  // Any write to blocks through collection(), whatever it touches.
  await collection(t.core.db, blocks).deleteMany({ accountId: -1n });
  expect(await get('test:long', 60_000)).toBe(2);
  expect(await get('test:long', 60_000)).toBe(2);
  expect(await get('test:short', 10)).toBe(3);
  await new Promise((r) => setTimeout(r, 30));
  expect(await get('test:short', 10)).toBe(4);
});

test("a viewer's blockers and the newest public page follow blocks and posts at once", async () => {
  const viewer = await createTestUser(t.core);
  const author = await createTestUser(t.core);
  expect((await blockersOf(t.core, viewer.account._id)).has(author.account._id)).toBe(false);
  await recordBlock(t.core, author.account._id, viewer.account._id);
  expect((await blockersOf(t.core, viewer.account._id)).has(author.account._id)).toBe(true);

  const filter = { accountId: author.account._id, deletedAt: null };
  const page = { limit: 20, maxId: null, minId: null, sinceId: null };
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual([]);
  const first = await postStatus(t.core, author.account, { text: 'first' });
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual([first._id]);
  const second = await postStatus(t.core, author.account, { text: 'second' });
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual([second._id, first._id]);
  await deleteStatus(t.core, author.account, second._id);
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual([first._id]);
});

test('a write that only moves counters keeps the kept pages; any other write to the collection drops them', async () => {
  const author = await createTestUser(t.core);
  const fan = await createTestUser(t.core);
  const posted = await postStatus(t.core, author.account, { text: 'counted' });
  let loads = 0;
  const get = () => recentResult(t.core.db, `test:counters:${posted._id}`, [statuses], 60_000, async () => ++loads);
  expect(await get()).toBe(1);
  // A favourite ($inc of the status's count), a bulk write of counters, and an update of counters alone.
  await favouriteStatus(t.core, fan.account, posted);
  await collection(t.core.db, statuses).bulkWrite([
    { updateOne: { filter: { _id: posted._id }, update: { $inc: { reblogsCount: 1 } } } },
  ]);
  await collection(t.core.db, statuses).updateMany(
    { _id: posted._id },
    { $inc: { repliesCount: 1, reblogsCount: -1 } },
  );
  expect(await get()).toBe(1);
  // The count itself is not kept here: the status shows it at once.
  const doc = await collection(t.core.db, statuses).findOne({ _id: posted._id });
  expect(doc?.favouritesCount).toBe(1);
  // $inc beside anything else counts, as does a bulk write with one such operation.
  await collection(t.core.db, statuses).updateOne(
    { _id: posted._id },
    { $inc: { repliesCount: -1 }, $set: { sensitive: false } },
  );
  expect(await get()).toBe(2);
  await collection(t.core.db, statuses).bulkWrite([
    { updateOne: { filter: { _id: posted._id }, update: { $inc: { reblogsCount: 1 } } } },
    { updateOne: { filter: { _id: posted._id }, update: { $set: { sensitive: false } } } },
  ]);
  expect(await get()).toBe(3);
});
