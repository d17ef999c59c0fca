// A post's author counters are written beside its insert (ADR 0018): the answer shows them, and a
// post whose insert fails takes its count back.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import type { StatusIdGenerator } from '../../../services/core/ids.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let core: Core;

beforeAll(async () => {
  ({ core } = await createTestCore());
});

afterAll(async () => {
  if (core) await closeTestCore(core);
});

const countsOf = async (id: bigint) => {
  const doc = await collection(core.db, accounts).findOne({ _id: id });
  return { statuses: doc?.statusesCount, lastAt: doc?.lastStatusAt };
};

it('counts a stored post once and takes back the count of a post whose insert failed', async () => {
  const { account } = await createTestUser(core);
  await postStatus(core, account, { text: 'stored' });
  expect((await countsOf(account._id)).statuses).toBe(1);

  // The next post gets an id another writer has just taken (a real duplicate-key failure of its
  // insert, after its counters went out beside it).
  const ids = core.statusIds;
  core.statusIds = {
    next: async () => {
      const id = await ids.next();
      await core.db.collection('statuses').insertOne({ _id: id as never, taken: true });
      return id;
    },
  } as unknown as StatusIdGenerator;
  try {
    await expect(postStatus(core, account, { text: 'not stored' })).rejects.toThrow(/duplicate key/i);
  } finally {
    core.statusIds = ids;
  }
  expect((await countsOf(account._id)).statuses).toBe(1);

  // Counting goes on as before.
  await Promise.all([postStatus(core, account, { text: 'two' }), postStatus(core, account, { text: 'three' })]);
  expect((await countsOf(account._id)).statuses).toBe(3);
});
