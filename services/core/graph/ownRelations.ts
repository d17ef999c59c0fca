// What a user's relationship pages list, newest first a page at a time: the accounts they follow,
// that follow them, that they block or mute, the domains they block and the hashtags they follow
// (Mastodon's /relationships and the blocks, mutes, domain blocks and followed hashtags screens).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { tagFollows } from '../model/tagFollows.ts';
import { tags, type TagDoc } from '../model/tags.ts';
import { accountsById } from './unfollow.ts';

export type AccountRelation = 'following' | 'followed_by' | 'blocks' | 'mutes';

export interface RelationsPage<T> {
  items: T[];
  /** The `max_id` of the next (older) page; null on the last one. */
  nextMaxId: Id | null;
}

export const RELATIONS_PAGE_SIZE = 40;

function pageOf<R extends { _id: Id }>(rows: R[], limit: number): { rows: R[]; nextMaxId: Id | null } {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { rows: kept, nextMaxId: more ? (kept.at(-1)?._id ?? null) : null };
}

const idFilter = (maxId: Id | null) => (maxId === null ? {} : { _id: { $lt: maxId } });

/** Accounts in one of the owner's relations, with when it began; the others' accounts gone from the list. */
export async function relatedAccounts(
  core: Core,
  ownerId: Id,
  relation: AccountRelation,
  maxId: Id | null = null,
  limit = RELATIONS_PAGE_SIZE,
): Promise<RelationsPage<{ account: AccountDoc; since: Date; expiresAt?: Date | null }>> {
  const now = new Date();
  const query = { sort: { _id: -1 as const }, limit: limit + 1 };
  const rows: { _id: Id; other: Id; createdAt: Date; expiresAt?: Date | null }[] =
    relation === 'following' || relation === 'followed_by'
      ? (
          await collection(core.db, follows)
            .find({ [relation === 'following' ? 'accountId' : 'targetAccountId']: ownerId, ...idFilter(maxId) }, query)
            .toArray()
        ).map((f) => ({
          _id: f._id,
          other: relation === 'following' ? f.targetAccountId : f.accountId,
          createdAt: f.createdAt,
        }))
      : relation === 'blocks'
        ? (
            await collection(core.db, blocks)
              .find({ accountId: ownerId, ...idFilter(maxId) }, query)
              .toArray()
          ).map((b) => ({ _id: b._id, other: b.targetAccountId, createdAt: b.createdAt }))
        : (
            await collection(core.db, mutes)
              .find(
                { accountId: ownerId, ...idFilter(maxId), $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] },
                query,
              )
              .toArray()
          ).map((m) => ({ _id: m._id, other: m.targetAccountId, createdAt: m.createdAt, expiresAt: m.expiresAt }));
  const page = pageOf(rows, limit);
  const byId = await accountsById(
    core,
    page.rows.map((r) => r.other),
  );
  return {
    items: page.rows.flatMap((r) => {
      const account = byId.get(r.other);
      return account
        ? [{ account, since: r.createdAt, ...(relation === 'mutes' ? { expiresAt: r.expiresAt ?? null } : {}) }]
        : [];
    }),
    nextMaxId: page.nextMaxId,
  };
}

/** The domains the owner blocks. */
export async function blockedDomains(
  core: Core,
  ownerId: Id,
  maxId: Id | null = null,
  limit = RELATIONS_PAGE_SIZE,
): Promise<RelationsPage<{ domain: string; since: Date }>> {
  const rows = await collection(core.db, accountDomainBlocks)
    .find({ accountId: ownerId, ...idFilter(maxId) }, { sort: { _id: -1 }, limit: limit + 1 })
    .toArray();
  const page = pageOf(rows, limit);
  return { items: page.rows.map((r) => ({ domain: r.domain, since: r.createdAt })), nextMaxId: page.nextMaxId };
}

/** The hashtags the owner follows. */
export async function followedTags(
  core: Core,
  ownerId: Id,
  maxId: Id | null = null,
  limit = RELATIONS_PAGE_SIZE,
): Promise<RelationsPage<TagDoc>> {
  const rows = await collection(core.db, tagFollows)
    .find({ accountId: ownerId, ...idFilter(maxId) }, { sort: { _id: -1 }, limit: limit + 1 })
    .toArray();
  const page = pageOf(rows, limit);
  const byId = new Map(
    (
      await collection(core.db, tags)
        .find({ _id: { $in: page.rows.map((r) => r.tagId) } })
        .toArray()
    ).map((t) => [t._id, t]),
  );
  return { items: page.rows.flatMap((r) => byId.get(r.tagId) ?? []), nextMaxId: page.nextMaxId };
}
