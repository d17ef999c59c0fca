// Removing accounts: a pending sign-up refused, a suspended account's data deleted (by an
// administrator, or by the scheduler once the suspension's grace period is over). The
// reversible actions (suspend, limit, strikes) are in accountActions.ts.
import { dropViewerFlags } from '../interactions/viewerFlags.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, blankProfile, type AccountDoc } from '../model/accounts.ts';
import { users } from '../model/users.ts';
import { statuses } from '../model/statuses.ts';
import { follows } from '../model/follows.ts';
import { followRequests } from '../model/followRequests.ts';
import { favourites } from '../model/favourites.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { clearNotifications, deleteNotificationsFrom } from '../notifications/groups.ts';
import { accessTokens } from '../model/oauth.ts';
import { forbidden } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { logAdminAction, type Actor } from '../users/moderation.ts';
import { endFollow, endFollowRequest } from '../graph/unfollow.ts';
import { acct, log, moderatedAccount, reload, userOfAccount } from './accountActions.ts';

/** Refuses a pending sign-up: the user and its account are deleted (403 when not pending). */
export async function rejectPendingUser(core: Core, target: AccountDoc, actor: Actor): Promise<AccountDoc> {
  const user = await userOfAccount(core, target);
  if (!user || user.approved) throw forbidden();
  await collection(core.db, accessTokens).updateMany({ userId: user._id }, { $set: { revokedAt: new Date() } });
  await collection(core.db, users).deleteOne({ _id: user._id });
  await collection(core.db, accounts).deleteOne({ _id: target._id });
  await logAdminAction(core, actor, 'reject', { type: 'User', id: user._id, name: acct(target) });
  return target;
}

/**
 * Deletes what a suspended account made and its relations (DELETE /api/v1/admin/accounts/:id; 403
 * unless suspended). The account record stays, suspended, so its name cannot be taken again.
 */
export async function deleteAccountData(core: Core, target: AccountDoc, actor: Actor): Promise<AccountDoc> {
  if (!target.suspendedAt) throw forbidden();
  const now = new Date();
  await collection(core.db, accounts).updateOne({ _id: target._id }, { $set: { dataDeletedAt: now } });
  await collection(core.db, statuses).updateMany(
    { accountId: target._id, deletedAt: null },
    { $set: { deletedAt: now, updatedAt: now } },
  );
  const pair = { _id: target._id, domain: target.domain };
  const others = async (ids: Id[]) =>
    collection(core.db, accounts)
      .find({ _id: { $in: ids } }, { projection: { _id: 1, domain: 1 } })
      .toArray();
  const following = await collection(core.db, follows).find({ accountId: target._id }).toArray();
  for (const other of await others(following.map((f) => f.targetAccountId)))
    await endFollow(core, pair, other, 'UNFOLLOW', pair);
  const followers = await collection(core.db, follows).find({ targetAccountId: target._id }).toArray();
  for (const other of await others(followers.map((f) => f.accountId)))
    await endFollow(core, other, pair, 'REMOVED_FROM_FOLLOWERS', pair);
  const requests = await collection(core.db, followRequests).find({ accountId: target._id }).toArray();
  for (const other of await others(requests.map((f) => f.targetAccountId)))
    await endFollowRequest(core, pair, other, 'REQUEST_WITHDRAWN', pair);
  await collection(core.db, followRequests).deleteMany({ targetAccountId: target._id });
  await Promise.all([
    collection(core.db, favourites).deleteMany({ accountId: target._id }),
    collection(core.db, bookmarks).deleteMany({ accountId: target._id }),
    collection(core.db, blocks).deleteMany({ $or: [{ accountId: target._id }, { targetAccountId: target._id }] }),
    collection(core.db, mutes).deleteMany({ $or: [{ accountId: target._id }, { targetAccountId: target._id }] }),
    clearNotifications(core, target._id),
    deleteNotificationsFrom(core, target._id),
  ]);
  await dropViewerFlags(core, target._id);
  await collection(core.db, accounts).updateOne(
    { _id: target._id },
    {
      $set: { ...blankProfile(), statusesCount: 0, updatedAt: now },
    },
  );
  const deleted: NewEvent<'AccountDataDeleted'> = {
    type: 'AccountDataDeleted',
    key: String(target._id),
    payload: {
      ...moderatedAccount(target, actor),
    },
    verify: { collection: accounts.name, filter: { _id: target._id, dataDeletedAt: { $ne: null } }, expect: 'exists' },
  };
  await core.outbox.write([deleted], async () => {
    await collection(core.db, accounts).updateOne({ _id: target._id }, { $set: { dataDeletedAt: now } });
  });
  await log(core, 'destroy', target, actor);
  return reload(core, target._id);
}

/** How long a suspension stays reversible before the account's data goes (Mastodon: 30 days). */
export const SUSPENSION_GRACE_MS = 30 * 86_400_000;

/**
 * Deletes the data of accounts suspended here more than 30 days ago (the scheduler's job). Each
 * account is claimed by setting `dataDeletedAt` first, so concurrent schedulers never share one.
 */
export async function deleteExpiredSuspensions(core: Core, limit = 10): Promise<number> {
  const cutoff = new Date(Date.now() - SUSPENSION_GRACE_MS);
  let handled = 0;
  for (; handled < limit; handled++) {
    const claimed = await collection(core.db, accounts).findOneAndUpdate(
      { suspendedAt: { $ne: null, $lt: cutoff }, suspensionOrigin: 'local', dataDeletedAt: null },
      { $set: { dataDeletedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (!claimed) break;
    await deleteAccountData(core, claimed, null);
  }
  return handled;
}
