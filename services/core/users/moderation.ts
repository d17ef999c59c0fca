// Administrator actions on users: approve a pending sign-up, confirm, change role, disable and
// enable the login (a disabled login's tokens get 403 until it is enabled again). Each one is written to the admin action log.
import { invalidateRenderedRole } from '../statuses/renderCache.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { findPageIn, type PageParams } from '../db/pages.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts } from '../model/accounts.ts';
import { adminActions, type AdminActionDoc } from '../model/adminActions.ts';
import type { RoleDoc } from '../model/roles.ts';
import { syncPendingFlag, confirmUser } from './confirmation.ts';
import { mailRequestedEvent } from '../mail/request.ts';

/** A page of the admin action log, newest first; only the entries of `actor` when one is given. */
export function adminActionsPage(core: Core, actor: Id | null, p: PageParams): Promise<AdminActionDoc[]> {
  return findPageIn(core.db, adminActions, actor === null ? {} : { accountId: actor }, p);
}

/** The acting administrator's account id; null for the command line. */
export type Actor = Id | null;

/**
 * Writes one entry of the admin action log: `actor` did `action` (Mastodon's action names) to the
 * record `target` of Mastodon's class `type`, which people know as `name`.
 */
export async function logAdminAction(
  core: Core,
  actor: Actor,
  action: string,
  target: { type: AdminActionDoc['targetType']; id: Id; name: string },
  details: AdminActionDoc['details'] = {},
): Promise<void> {
  await collection(core.db, adminActions).insertOne({
    _id: await nextSerialId(core.db, 'admin_action_logs'),
    accountId: actor,
    action,
    targetType: target.type,
    targetId: String(target.id),
    humanIdentifier: target.name,
    details,
    createdAt: new Date(),
  });
}

async function usernameOf(core: Core, user: UserDoc): Promise<string> {
  const account = await collection(core.db, accounts).findOne({ _id: user.accountId }, { projection: { username: 1 } });
  return account?.username ?? String(user.accountId);
}

async function reload(core: Core, id: Id): Promise<UserDoc> {
  const user = await collection(core.db, users).findOne({ _id: id });
  if (!user) throw new Error(`user ${id} vanished`);
  return user;
}

export async function approveUser(core: Core, user: UserDoc, actor: Actor): Promise<UserDoc> {
  if (user.approved) return user;
  const username = await usernameOf(core, user);
  // The person learns by mail that they can log in now (sent once the address is confirmed).
  const events = user.confirmedAt
    ? [
        mailRequestedEvent(
          {
            to: user.email,
            template: 'approved',
            key: String(user._id),
            variables: { username, instance: core.config.localDomain, link: `${core.config.baseUrl}/auth/sign_in` },
          },
          { collection: users.name, filter: { _id: user._id, approved: true }, expect: 'exists' },
        ),
      ]
    : [];
  await core.outbox.write(events, async () => {
    await collection(core.db, users).updateOne({ _id: user._id }, { $set: { approved: true, updatedAt: new Date() } });
  });
  const updated = await reload(core, user._id);
  await syncPendingFlag(core, updated);
  await logAdminAction(core, actor, 'approve', { type: 'User', id: user._id, name: username });
  return updated;
}

export async function confirmUserByAdmin(core: Core, user: UserDoc, actor: Actor): Promise<UserDoc> {
  if (user.confirmedAt) return user;
  const updated = await confirmUser(core, user);
  await logAdminAction(core, actor, 'confirm', { type: 'User', id: user._id, name: await usernameOf(core, user) });
  return updated;
}

export async function changeRole(core: Core, user: UserDoc, role: RoleDoc | null, actor: Actor): Promise<UserDoc> {
  await collection(core.db, users).updateOne(
    { _id: user._id },
    { $set: { roleId: role?._id ?? null, updatedAt: new Date() } },
  );
  await invalidateRenderedRole(core, user.accountId);
  await logAdminAction(
    core,
    actor,
    'change_role',
    { type: 'User', id: user._id, name: await usernameOf(core, user) },
    { role: role?.name ?? null },
  );
  return reload(core, user._id);
}

export async function setDisabled(core: Core, user: UserDoc, disabled: boolean, actor: Actor): Promise<UserDoc> {
  await collection(core.db, users).updateOne({ _id: user._id }, { $set: { disabled, updatedAt: new Date() } });
  await logAdminAction(core, actor, disabled ? 'disable' : 'enable', {
    type: 'User',
    id: user._id,
    name: await usernameOf(core, user),
  });
  return reload(core, user._id);
}
