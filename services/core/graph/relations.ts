// Read side of the social graph, as the visibility rules need it. Writes (follow, block, mute
// APIs) belong to their own operations; `recordFollow` is the bare write those and tests share.
import type { Core } from '../context.ts';
import { markFanOutFilters } from '../feeds/fanOutFilters.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { recordedAmong } from '../model/accountRecord.ts';

export async function isFollowing(core: Core, accountId: Id, targetAccountId: Id): Promise<boolean> {
  return (await collection(core.db, follows).countDocuments({ accountId, targetAccountId }, { limit: 1 })) > 0;
}

export async function isBlocking(core: Core, accountId: Id, targetAccountId: Id): Promise<boolean> {
  return (await collection(core.db, blocks).countDocuments({ accountId, targetAccountId }, { limit: 1 })) > 0;
}

export async function isMuting(core: Core, accountId: Id, targetAccountId: Id, now = new Date()): Promise<boolean> {
  const mute = await collection(core.db, mutes).findOne({ accountId, targetAccountId });
  return mute !== null && (mute.expiresAt === null || mute.expiresAt > now);
}

/** Which of `targetIds` the account follows. */
export async function followedAmong(core: Core, accountId: Id, targetIds: Id[]): Promise<Set<bigint>> {
  return recordedAmong(core.db, follows, accountId, 'targetAccountId', targetIds);
}

/** Which of `accountIds` block `targetAccountId`. */
export async function blockersAmong(core: Core, accountIds: Id[], targetAccountId: Id): Promise<Set<bigint>> {
  if (accountIds.length === 0) return new Set();
  const found = await collection(core.db, blocks)
    .find({ accountId: { $in: accountIds }, targetAccountId }, { projection: { accountId: 1 } })
    .toArray();
  return new Set(found.map((b) => b.accountId));
}

/** Which of `targetIds` the account blocks. */
export async function blockedAmong(core: Core, accountId: Id, targetIds: Id[]): Promise<Set<bigint>> {
  return recordedAmong(core.db, blocks, accountId, 'targetAccountId', targetIds);
}

/** Inserts a follow if none exists (no events, no counters): the core of the follow operation. */
export async function recordFollow(
  core: Core,
  accountId: Id,
  targetAccountId: Id,
  opts: { showReblogs?: boolean; notify?: boolean; uri?: string | null } = {},
): Promise<void> {
  await insertOnce(collection(core.db, follows), {
    _id: await nextSerialId(core.db, 'follows'),
    accountId,
    targetAccountId,
    showReblogs: opts.showReblogs ?? true,
    notify: opts.notify ?? false,
    languages: null,
    uri: opts.uri ?? null,
    createdAt: new Date(),
  });
}

/** Inserts a block if none exists (no events): the core of the block operation. */
export async function recordBlock(core: Core, accountId: Id, targetAccountId: Id): Promise<void> {
  await markFanOutFilters(core, [targetAccountId]);
  await insertOnce(collection(core.db, blocks), {
    _id: await nextSerialId(core.db, 'blocks'),
    accountId,
    targetAccountId,
    uri: null,
    createdAt: new Date(),
  });
}

/**
 * For each target, up to 80 of the accounts `viewerId` follows that follow it (Mastodon's
 * familiar followers: "followed by people you know").
 */
export async function familiarFollowerIds(core: Core, viewerId: Id, targetIds: readonly Id[]): Promise<Map<Id, Id[]>> {
  const mine = (
    await collection(core.db, follows)
      .find({ accountId: viewerId }, { projection: { targetAccountId: 1 } })
      .toArray()
  ).map((f) => f.targetAccountId);
  const out = new Map<Id, Id[]>();
  await Promise.all(
    targetIds.map(async (target) => {
      const known = mine.length
        ? await collection(core.db, follows)
            .find({ targetAccountId: target, accountId: { $in: mine } }, { projection: { accountId: 1 } })
            .limit(80)
            .toArray()
        : [];
      out.set(
        target,
        known.map((k) => k.accountId),
      );
    }),
  );
  return out;
}
