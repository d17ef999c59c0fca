// Suspensions are reversible for 30 days; then the scheduler's job deletes the account's data once.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { suspendAccount } from '../../../services/core/moderation/accountActions.ts';
import { deleteExpiredSuspensions, SUSPENSION_GRACE_MS } from '../../../services/core/moderation/accountRemoval.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

describe('expired suspensions', () => {
  let core: Core;
  beforeAll(async () => {
    ({ core } = await createTestCore());
  });
  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('deletes the data of accounts suspended over 30 days ago, once, and leaves recent ones', async () => {
    const [old, recent, fan] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
    for (const u of [old, recent]) {
      await postStatus(core, u.account, { text: 'hello' });
      await followAccount(core, fan.account, u.account);
    }
    await suspendAccount(core, old.account, null);
    await suspendAccount(core, recent.account, null);
    await collection(core.db, accounts).updateOne(
      { _id: old.account._id },
      { $set: { suspendedAt: new Date(Date.now() - SUSPENSION_GRACE_MS - 60_000) } },
    );

    expect(await deleteExpiredSuspensions(core)).toBe(1);
    expect(await deleteExpiredSuspensions(core)).toBe(0);
    expect(await collection(core.db, statuses).countDocuments({ accountId: old.account._id, deletedAt: null })).toBe(0);
    expect(await collection(core.db, follows).countDocuments({ targetAccountId: old.account._id })).toBe(0);
    expect((await collection(core.db, accounts).findOne({ _id: old.account._id }))?.dataDeletedAt).toBeInstanceOf(Date);
    // The recent suspension can still be lifted with everything in place.
    expect(await collection(core.db, statuses).countDocuments({ accountId: recent.account._id, deletedAt: null })).toBe(
      1,
    );
    expect(await collection(core.db, follows).countDocuments({ targetAccountId: recent.account._id })).toBe(1);
  });
});
