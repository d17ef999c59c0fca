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

test("a post drops its author's kept pages and those of no author, not other authors' pages", async () => {
  const [alice, bob, carol] = [
    await createTestUser(t.core),
    await createTestUser(t.core),
    await createTestUser(t.core),
  ];
  const loads = new Map<string, number>();
  const get = (key: string, filter: Record<string, unknown>) =>
    recentResult(
      t.core.db,
      `test:scoped:${alice.account._id}:${key}`,
      [{ name: statuses.name, filter }],
      60_000,
      async () => {
        loads.set(key, (loads.get(key) ?? 0) + 1);
        return loads.get(key);
      },
    );
  const all = () =>
    Promise.all([
      get('alice', { accountId: alice.account._id, deletedAt: null }),
      get('bob', { accountId: bob.account._id, deletedAt: null }),
      get('alice or carol', { accountId: { $in: [alice.account._id, carol.account._id] } }),
      get('public', { visibility: 'public', deletedAt: null }),
      get('not bob', { accountId: { $ne: bob.account._id } }),
    ]);
  expect(await all()).toEqual([1, 1, 1, 1, 1]);
  await postStatus(t.core, bob.account, { text: 'by bob' });
  expect(await all()).toEqual([1, 2, 1, 2, 2]);
  await postStatus(t.core, carol.account, { text: 'by carol' });
  expect(await all()).toEqual([1, 2, 2, 3, 3]);
  const mine = await postStatus(t.core, alice.account, { text: 'by alice' });
  expect(await all()).toEqual([2, 2, 3, 4, 4]);
  // Any other write (a deletion sets deletedAt) counts for every kept result.
  await deleteStatus(t.core, alice.account, mine._id);
  expect(await all()).toEqual([3, 3, 4, 5, 5]);

  // A post racing the load of its author's page leaves nothing kept; another author's does.
  let n = 0;
  const racing = (author: typeof alice) =>
    recentResult(
      t.core.db,
      `test:scoped:race:${alice.account._id}`,
      [{ name: statuses.name, filter: { accountId: alice.account._id } }],
      60_000,
      async () => {
        n++;
        await postStatus(t.core, author.account, { text: 'racing' });
        return n;
      },
    );
  expect(await racing(alice)).toBe(1);
  expect(await racing(bob)).toBe(2);
  expect(await racing(bob)).toBe(2);

  // Through pageIdsOf: alice's newest page is still right after bob's post, and shows her next one.
  const page = { limit: 20, maxId: null, minId: null, sinceId: null };
  const filter = { accountId: alice.account._id, deletedAt: null };
  const before = await pageIdsOf(t.core.db, statuses, filter, page);
  await postStatus(t.core, bob.account, { text: 'bob again' });
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual(before);
  const next = await postStatus(t.core, alice.account, { text: 'alice again' });
  expect(await pageIdsOf(t.core.db, statuses, filter, page)).toEqual([next._id, ...before]);
});
