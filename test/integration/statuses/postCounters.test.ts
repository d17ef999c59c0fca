// A post's author counters are written beside its insert (ADR 0018): the answer shows them, and a
// post whose insert fails takes its count back.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import type { StatusIdGenerator } from '../../../services/core/ids.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';

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

describe('the answer to POST /api/v1/statuses', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('shows the author with the post counted, as a read right after it does; a direct post does not count', async () => {
    const author = await createTestUser(api.core);
    const first = await api.call('POST', '/api/v1/statuses', author.token, { status: 'one' });
    expect(first.status).toBe(200);
    expect(first.body.account).toMatchObject({ statuses_count: 1, last_status_at: first.body.created_at.slice(0, 10) });
    const second = await api.call('POST', '/api/v1/statuses', author.token, { status: 'two' });
    expect(second.body.account.statuses_count).toBe(2);
    const direct = await api.call('POST', '/api/v1/statuses', author.token, { status: 'psst', visibility: 'direct' });
    expect(direct.status).toBe(200);
    expect(direct.body.account.statuses_count).toBe(2);

    expect((await api.call('GET', '/api/v1/accounts/verify_credentials', author.token)).body.statuses_count).toBe(2);
    const shown = await api.call('GET', `/api/v1/statuses/${first.body.id}`, author.token);
    expect(shown.body.account.statuses_count).toBe(2);
  });
});
