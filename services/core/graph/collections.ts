// Who may see an account's followers and following (rules 4 and 5), and which listed accounts a
// viewer must not be shown.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc, CachedAccount } from '../model/accounts.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { isBlocking } from './relations.ts';

/** False when the owner hides its collections (except from itself) or blocks the viewer. */
export async function collectionsVisible(
  core: Core,
  owner: CachedAccount,
  viewer: CachedAccount | null,
): Promise<boolean> {
  if (viewer && viewer._id === owner._id) return true;
  if (owner.hideCollections) return false;
  if (viewer && (await isBlocking(core, owner._id, viewer._id))) return false;
  return true;
}

/** Of `ids`, those the viewer blocks, mutes or is blocked by: left out of account lists. */
export async function hiddenFrom(
  core: Core,
  viewer: Pick<AccountDoc, '_id'> | null,
  ids: Id[],
  now = new Date(),
): Promise<Set<bigint>> {
  if (!viewer || ids.length === 0) return new Set();
  const [blocking, blockedBy, muting] = await Promise.all([
    collection(core.db, blocks)
      .find({ accountId: viewer._id, targetAccountId: { $in: ids } }, { projection: { targetAccountId: 1 } })
      .toArray(),
    collection(core.db, blocks)
      .find({ accountId: { $in: ids }, targetAccountId: viewer._id }, { projection: { accountId: 1 } })
      .toArray(),
    collection(core.db, mutes)
      .find({ accountId: viewer._id, targetAccountId: { $in: ids } })
      .toArray(),
  ]);
  return new Set([
    ...blocking.map((b) => b.targetAccountId),
    ...blockedBy.map((b) => b.accountId),
    ...muting.filter((m) => m.expiresAt === null || m.expiresAt > now).map((m) => m.targetAccountId),
  ]);
}
