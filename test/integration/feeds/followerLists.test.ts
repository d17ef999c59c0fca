// The followers a post's fan-out writes to, kept in Redis per author (feeds/followerLists.ts,
// db/groupCache.ts): the lists match the follow records, writes through `collection()` drop the
// entries they touch (insert, delete by id, delete by a filter without the target), a read that
// raced a write does not put its old answer back, a big account's entry says "read in slices",
// and a consumer batch's statuses get their authors' lists. A hashtag's followers are kept the
// same way (feeds/fanOutWrites.ts tagFollowerIds).
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { follows, type FollowDoc } from '../../../services/core/model/follows.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { unfollowAccount } from '../../../services/core/graph/unfollow.ts';
import { followerListKey, remembered, type FanOutStatus } from '../../../services/core/feeds/authorSide.ts';
import {
  FAN_OUT_PAGE,
  FOLLOWERS,
  followerLists,
  rememberFollowerLists,
} from '../../../services/core/feeds/followerLists.ts';
import { readGroups } from '../../../services/core/db/groupCache.ts';
import { tagFollowerIds } from '../../../services/core/feeds/fanOutWrites.ts';
import { followTag, unfollowTag } from '../../../services/core/tags/tagFollows.ts';
import { tags, type TagDoc } from '../../../services/core/model/tags.ts';
import { tagFollows } from '../../../services/core/model/tagFollows.ts';

let core: Core;
beforeAll(async () => {
  core = (await createTestCore()).core;
});
afterAll(async () => {
  await closeTestCore(core);
});

const account = async () => (await createTestUser(core)).account as AccountDoc;
const sorted = (ids: bigint[] | null | undefined) => (ids ? [...ids].sort((a, b) => (a < b ? -1 : 1)) : ids);
const listOf = async (a: AccountDoc) => sorted((await followerLists(core, [a])).get(a._id));

/** A follow record written beside the cache's wrapper: a cached list does not see it. */
const rawFollow = async (who: AccountDoc, whom: AccountDoc) => {
  const doc: FollowDoc = {
    _id: await core.statusIds.next(),
    accountId: who._id,
    targetAccountId: whom._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: null,
    createdAt: new Date(),
  };
  await core.db.collection<FollowDoc>(follows.name).insertOne(doc);
  return doc;
};

test('the lists match the follow records, and every write through collection() drops the authors it touches', async () => {
  const [ann, ben, f1, f2, f3] = await Promise.all(Array.from({ length: 5 }, account));
  await followAccount(core, f1, ann);
  await followAccount(core, f2, ann);
  await followAccount(core, f3, ben);
  const both = await followerLists(core, [ann, ben]);
  expect(sorted(both.get(ann._id))).toEqual(sorted([f1._id, f2._id]));
  expect(both.get(ben._id)).toEqual([f3._id]);

  // Cached: a record written past the wrapper is not seen until a write through it drops the entry.
  await rawFollow(f3, ann);
  expect(await listOf(ann)).toEqual(sorted([f1._id, f2._id]));
  await followAccount(core, f3, ben); // a write about ben leaves ann's entry
  expect(await listOf(ann)).toEqual(sorted([f1._id, f2._id]));
  const f4 = await account();
  await followAccount(core, f4, ann);
  expect(await listOf(ann)).toEqual(sorted([f1._id, f2._id, f3._id, f4._id]));

  await unfollowAccount(core, f1, ann);
  expect(await listOf(ann)).toEqual(sorted([f2._id, f3._id, f4._id]));

  // A filter that does not name the target: the matching records' targets are read before the write.
  await collection(core.db, follows).deleteMany({ accountId: f3._id });
  expect(await listOf(ann)).toEqual(sorted([f2._id, f4._id]));
  expect(await listOf(ben)).toEqual([]);

  // An upsert whose filter does not name the target: the one it inserts with is dropped.
  const f5 = await account();
  await collection(core.db, follows).updateOne(
    { uri: `https://example.test/follows/${f5._id}` },
    {
      $setOnInsert: {
        _id: await core.statusIds.next(),
        accountId: f5._id,
        targetAccountId: ben._id,
        showReblogs: true,
        notify: false,
        languages: null,
        createdAt: new Date(),
      },
    },
    { upsert: true },
  );
  expect(await listOf(ben)).toEqual([f5._id]);
});

test('a read that raced a write does not store what it read before the write', async () => {
  const [ann, f1, f2] = await Promise.all(Array.from({ length: 3 }, account));
  await followAccount(core, f1, ann);
  const stale = await readGroups(
    core,
    FOLLOWERS,
    [ann._id],
    async () => {
      // The write lands (and drops the entry) between this read's generation and its fill.
      await followAccount(core, f2, ann);
      return new Map([[ann._id, [f1._id]]]);
    },
    { encode: () => Buffer.from([0]), decode: () => null },
  );
  expect(stale.get(ann._id)).toEqual([f1._id]);
  expect(await listOf(ann)).toEqual(sorted([f1._id, f2._id]));
});

test('an account with more than a page of followers is read in slices: its entry says so', async () => {
  const big = await account();
  const docs = Array.from({ length: FAN_OUT_PAGE + 1 }, (_, i) => ({
    _id: BigInt(9_000_000_000 + i) + big._id,
    accountId: 1_000_000n + BigInt(i),
    targetAccountId: big._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: null,
    createdAt: new Date(),
  }));
  await collection(core.db, follows).insertMany(docs);
  expect((await followerLists(core, [big])).get(big._id)).toBeNull();
  await collection(core.db, follows).deleteOne({ _id: docs[0]!._id });
  expect((await followerLists(core, [big])).get(big._id)).toHaveLength(FAN_OUT_PAGE);
  await collection(core.db, follows).deleteMany({ targetAccountId: big._id });
});

test('each status of a consumer batch gets its author’s list; a direct message none', async () => {
  const [ann, ben, f1, f2, f3] = await Promise.all(Array.from({ length: 5 }, account));
  for (const [who, whom] of [
    [f1, ann],
    [f2, ann],
    [f3, ann],
    [f3, ben],
  ] as const)
    await followAccount(core, who, whom);
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
  const batch = [await status(ann), await status(ben), await status(ann)];
  const direct = await status(ben, 'direct');
  await rememberFollowerLists(core, [...batch, direct]);
  const notReadAhead = async (): Promise<never> => {
    throw new Error('not read ahead');
  };
  for (const s of batch) {
    const ahead = await remembered<bigint[]>(core, followerListKey(s.statusId), notReadAhead);
    expect(sorted(ahead)).toEqual(s.accountId === ann._id ? sorted([f1._id, f2._id, f3._id]) : [f3._id]);
  }
  await expect(remembered(core, followerListKey(direct.statusId), notReadAhead)).rejects.toThrow('not read ahead');
});

test('a hashtag’s followers: follows and unfollows through collection() show at once', async () => {
  const name = `cached${Date.now()}`;
  const tag: TagDoc = {
    _id: await core.statusIds.next(),
    name,
    nameNormalized: name,
    createdAt: new Date(),
    updatedAt: new Date(),
  };
  await collection(core.db, tags).insertOne(tag);
  const [ann, ben] = await Promise.all([account(), account()]);
  expect(await tagFollowerIds(core, [name])).toEqual([]);
  // Cached: a record written past the wrapper is not seen until a write through it drops the entry.
  await core.db
    .collection<{ _id: bigint; accountId: bigint; tagId: bigint; createdAt: Date }>(tagFollows.name)
    .insertOne({ _id: await core.statusIds.next(), accountId: ben._id, tagId: tag._id, createdAt: new Date() });
  expect(await tagFollowerIds(core, [name])).toEqual([]);
  await followTag(core, ann, tag);
  expect(sorted(await tagFollowerIds(core, [name]))).toEqual(sorted([ann._id, ben._id]));
  await unfollowTag(core, ann, tag);
  expect(await tagFollowerIds(core, [name])).toEqual([ben._id]);
  await collection(core.db, tagFollows).deleteMany({ accountId: ben._id });
  expect(await tagFollowerIds(core, [name])).toEqual([]);
});
