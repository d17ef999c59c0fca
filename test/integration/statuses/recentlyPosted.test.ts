// The statuses a process has just posted are handed to its consumers from memory (no MongoDB read
// right after the post), until a write to the status through the process drops the copy.
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { newStatuses } from '../../../services/core/statuses/recentlyPosted.ts';

let core: Core;
beforeAll(async () => {
  ({ core } = await createTestCore());
});
afterAll(async () => {
  await closeTestCore(core);
});

test('a status just posted comes from memory; a write through the process drops it; others are read', async () => {
  const { account } = await createTestUser(core);
  const post = await postStatus(core, account, { text: 'kept', visibility: 'public' });
  const raw = core.db.collection<{ _id: bigint; spoilerText: string }>('statuses');
  // A write that bypasses collection() is not seen while the copy is kept...
  await raw.updateOne({ _id: post._id }, { $set: { spoilerText: 'bypassed' } });
  expect((await newStatuses(core, [post._id])).map((s) => s.spoilerText)).toEqual([post.spoilerText]);
  // ...a write through collection() drops the copy, and the status is read from MongoDB.
  await collection(core.db, statuses).updateOne({ _id: post._id }, { $set: { spoilerText: 'written' } });
  expect((await newStatuses(core, [post._id])).map((s) => s.spoilerText)).toEqual(['written']);
  // Statuses this process did not post are read; unknown ids are left out; duplicates count once.
  const other = await postStatus(core, account, { text: 'other', visibility: 'public' });
  await collection(core.db, statuses).updateOne({ _id: other._id }, { $set: { spoilerText: 'read' } });
  const both = await newStatuses(core, [post._id, other._id, other._id, 1n]);
  expect(both.map((s) => s.spoilerText).sort()).toEqual(['read', 'written']);
});
