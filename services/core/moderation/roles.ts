// Custom roles (Mastodon's UserRole management): create, change and delete, where a role can only
// grant what its creator holds and rank below its creator (the command line acts with all powers).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { roles, type RoleDoc } from '../model/roles.ts';
import { users } from '../model/users.ts';
import { PERMISSION_FLAGS, hasPermission } from '../roles/permissions.ts';
import { createRole, ensureBuiltInRoles, forgetCachedRole, type EffectiveRole } from '../roles/roles.ts';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { changeRole, logAdminAction, type Actor } from '../users/moderation.ts';
import type { UserDoc } from '../model/users.ts';

/** Who creates or changes a role: a staff member's role, or null for the command line. */
export type RoleGrantor = EffectiveRole | null;

const BUILT_IN = new Set(['owner', 'admin', 'moderator']);

function assertCanGrant(grantor: RoleGrantor, permissions: number, position: number): void {
  if (grantor === null) return;
  if (!hasPermission(grantor.permissions, 'manage_roles')) throw forbidden();
  if (position >= grantor.position) throw forbidden('A role must rank below your own');
  if (hasPermission(grantor.permissions, 'administrator')) return;
  for (const flag of Object.values(PERMISSION_FLAGS)) {
    if ((permissions & flag) !== 0 && (grantor.permissions & flag) === 0)
      throw forbidden('A role cannot grant permissions you do not have');
  }
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw validationFailed("Name can't be blank");
  if (trimmed.length > 100) throw validationFailed('Name is too long (maximum is 100 characters)');
  return trimmed;
}

export async function createCustomRole(
  core: Core,
  input: { name: string; permissions: number; position?: number; color?: string; highlighted?: boolean },
  grantor: RoleGrantor,
  actor: Actor,
): Promise<RoleDoc> {
  await ensureBuiltInRoles(core);
  const name = checkName(input.name);
  const position = input.position ?? 0;
  assertCanGrant(grantor, input.permissions, position);
  if (await collection(core.db, roles).findOne({ nameLower: name.toLowerCase() }))
    throw validationFailed('Name has already been taken');
  const role = await createRole(core, { ...input, name, position });
  await logAdminAction(core, actor, 'create', { type: 'UserRole', id: role._id, name: role.name });
  return role;
}

export async function updateCustomRole(
  core: Core,
  role: RoleDoc,
  input: { permissions?: number; position?: number; color?: string; highlighted?: boolean; require2fa?: boolean },
  grantor: RoleGrantor,
  actor: Actor,
): Promise<RoleDoc> {
  const permissions = input.permissions ?? role.permissions;
  const position = input.position ?? role.position;
  // The grantor must outrank the role both before and after the change.
  assertCanGrant(grantor, permissions, Math.max(position, role.position));
  const updated = await collection(core.db, roles).findOneAndUpdate(
    { _id: role._id },
    {
      $set: {
        permissions,
        position,
        color: input.color ?? role.color,
        highlighted: input.highlighted ?? role.highlighted,
        require2fa: input.require2fa ?? role.require2fa ?? false,
        updatedAt: new Date(),
      },
    },
    { returnDocument: 'after' },
  );
  if (!updated) throw notFound();
  forgetCachedRole(role._id);
  await logAdminAction(core, actor, 'update', { type: 'UserRole', id: role._id, name: role.name });
  return updated;
}

/** Deletes a custom role; its users fall back to the everyone role. Built-in roles stay. */
export async function deleteCustomRole(core: Core, role: RoleDoc, grantor: RoleGrantor, actor: Actor): Promise<void> {
  if (BUILT_IN.has(role.nameLower)) throw forbidden('Built-in roles cannot be deleted');
  assertCanGrant(grantor, role.permissions, role.position);
  await collection(core.db, users).updateMany({ roleId: role._id }, { $set: { roleId: null, updatedAt: new Date() } });
  await collection(core.db, roles).deleteOne({ _id: role._id });
  await logAdminAction(core, actor, 'destroy', { type: 'UserRole', id: role._id, name: role.name });
}

/**
 * A staff member gives a user another role (Mastodon's Admin::Users::RolesController): it takes
 * manage_roles, and the grantor must outrank both the user's current role and the new one.
 */
export async function assignRole(
  core: Core,
  target: UserDoc,
  role: RoleDoc | null,
  grantor: RoleGrantor,
  actor: Actor,
): Promise<UserDoc> {
  if (grantor !== null) {
    if (!hasPermission(grantor.permissions, 'manage_roles')) throw forbidden();
    const current = target.roleId === null ? null : await collection(core.db, roles).findOne({ _id: target.roleId });
    if (current && current.position >= grantor.position) throw forbidden();
    if (role && role.position >= grantor.position) throw forbidden('A role must rank below your own');
  }
  return changeRole(core, target, role, actor);
}

/** Permission names held by a mask (for listings). */
export function permissionNames(mask: number): string[] {
  return Object.entries(PERMISSION_FLAGS)
    .filter(([, flag]) => (mask & flag) !== 0)
    .map(([name]) => name);
}
