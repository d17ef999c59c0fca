// The fan-out's batch read of followers (services/core/feeds/followersAhead.ts) hands each new
// status of a consumer batch the follower page its own query would have read, newest follow first,
// and leaves out what the fan-out must read itself (a direct message).
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { follows } from '../../../services/core/model/follows.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { followerPageKey, remembered, type FanOutStatus } from '../../../services/core/feeds/authorSide.ts';
import { rememberFollowerPages } from '../../../services/core/feeds/followersAhead.ts';

let core: Core;
beforeAll(async () => {
  core = (await createTestCore()).core;
});
afterAll(async () => {
  await closeTestCore(core);
});

const notReadAhead = async (): Promise<never> => {
  throw new Error('not read ahead');
};

test('each status of a batch gets its author’s follower page as its own query reads it', async () => {
  const [ann, ben, f1, f2, f3] = await Promise.all(Array.from({ length: 5 }, () => createTestUser(core)));
  for (const [who, whom] of [
    [f1, ann],
    [f2, ann],
    [f3, ann],
    [f3, ben],
    [f1, ben],
  ] as const)
    await followAccount(core, who.account as AccountDoc, whom.account as AccountDoc);
  const status = async (
    author: AccountDoc,
    visibility: FanOutStatus['visibility'] = 'public',
  ): Promise<FanOutStatus> => ({
    statusId: await core.statusIds.next(),
    accountId: author._id,
    visibility,
    inReplyToAccountId: null,
    mentionedAccountIds: [],
    tagNames: [],
    reblogOfId: null,
    reblogOfAccountId: null,
  });
  const batch = [
    await status(ann.account as AccountDoc),
    await status(ben.account as AccountDoc),
    await status(ann.account as AccountDoc),
  ];
  const direct = await status(ben.account as AccountDoc, 'direct');
  await rememberFollowerPages(core, [...batch, direct]);

  for (const s of batch) {
    const ahead = await remembered<Array<{ _id: bigint; accountId: bigint }>>(
      core,
      followerPageKey(s.statusId),
      notReadAhead,
    );
    const own = await collection(core.db, follows)
      .find({ targetAccountId: s.accountId }, { projection: { _id: 1, accountId: 1 } })
      .sort({ _id: -1 })
      .toArray();
    expect(ahead).toEqual(own);
    expect(ahead.length).toBe(s.accountId === ann.account._id ? 3 : 2);
  }
  await expect(remembered(core, followerPageKey(direct.statusId), notReadAhead)).rejects.toThrow('not read ahead');
});
