// Role records: the built-in Owner/Admin/Moderator (created on first use) and custom roles.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import { roles, type RoleDoc } from '../model/roles.ts';
import { BUILT_IN_ROLES, DEFAULT_PERMISSIONS, hasPermission, type Permission } from './permissions.ts';
import { TtlCache } from '../cache/ttlCache.ts';

/** The role users without a stored role have (Mastodon's "everyone", id -99). */
export interface EffectiveRole {
  id: string;
  name: string;
  color: string;
  position: number;
  permissions: number;
  highlighted: boolean;
  require2fa: boolean;
}

export const EVERYONE_ROLE: EffectiveRole = {
  id: '-99',
  name: '',
  color: '',
  position: -1,
  permissions: DEFAULT_PERMISSIONS,
  highlighted: false,
  require2fa: false,
};

export function toEffectiveRole(doc: RoleDoc): EffectiveRole {
  return {
    id: String(doc._id),
    name: doc.name,
    color: doc.color,
    position: doc.position,
    permissions: doc.permissions,
    highlighted: doc.highlighted,
    require2fa: doc.require2fa === true,
  };
}

/** Creates the built-in roles when missing; idempotent and safe to race. */
export async function ensureBuiltInRoles(core: Core): Promise<void> {
  const coll = collection(core.db, roles);
  for (const r of BUILT_IN_ROLES) {
    if (await coll.findOne({ nameLower: r.name.toLowerCase() }, { projection: { _id: 1 } })) continue;
    const now = new Date();
    await insertOnce(coll, {
      _id: await nextSerialId(core.db, 'user_roles'),
      name: r.name,
      nameLower: r.name.toLowerCase(),
      color: '',
      position: r.position,
      permissions: r.permissions,
      highlighted: r.highlighted,
      createdAt: now,
      updatedAt: now,
    });
  }
}

/** A role by id; null when there is none. */
export function findRole(core: Core, id: Id): Promise<RoleDoc | null> {
  return collection(core.db, roles).findOne({ _id: id });
}

/** Every role, built-in ones included, by position (lowest first, or highest with 'descending'). */
export async function listRoles(core: Core, order: 'ascending' | 'descending'): Promise<RoleDoc[]> {
  await ensureBuiltInRoles(core);
  return collection(core.db, roles)
    .find({})
    .sort({ position: order === 'ascending' ? 1 : -1 })
    .toArray();
}

/** A role by name (case-insensitive), built-in ones included; null when there is none. */
export async function findRoleByName(core: Core, name: string): Promise<RoleDoc | null> {
  await ensureBuiltInRoles(core);
  return collection(core.db, roles).findOne({ nameLower: name.trim().toLowerCase() });
}

export async function createRole(
  core: Core,
  input: { name: string; permissions: number; color?: string; position?: number; highlighted?: boolean },
): Promise<RoleDoc> {
  const now = new Date();
  const doc: RoleDoc = {
    _id: await nextSerialId(core.db, 'user_roles'),
    name: input.name.trim(),
    nameLower: input.name.trim().toLowerCase(),
    color: input.color ?? '',
    position: input.position ?? 0,
    permissions: input.permissions,
    highlighted: input.highlighted ?? false,
    createdAt: now,
    updatedAt: now,
  };
  await collection(core.db, roles).insertOne(doc);
  return doc;
}

// Roles are few and change rarely, but are read for every rendered local account and admin
// request: keep each for a short while per process (keyed by database, as tests share processes).
const ROLE_CACHE_MS = 10_000;
const roleCache = new TtlCache<string, EffectiveRole>(ROLE_CACHE_MS, 1000);

/** The effective role of a user (everyone role when none or when the stored one vanished). */
export async function roleOfUser(core: Core, user: { roleId: Id | null }): Promise<EffectiveRole> {
  if (user.roleId === null) return EVERYONE_ROLE;
  const key = `${core.db.databaseName}:${user.roleId}`;
  const cached = roleCache.get(key);
  if (cached) return cached;
  const doc = await collection(core.db, roles).findOne({ _id: user.roleId });
  const role = doc ? toEffectiveRole(doc) : EVERYONE_ROLE;
  roleCache.set(key, role);
  return role;
}

export async function userCan(core: Core, user: { roleId: Id | null }, permission: Permission): Promise<boolean> {
  return hasPermission((await roleOfUser(core, user)).permissions, permission);
}

/** Drops this process's copy of a changed role (other processes see the change within ROLE_CACHE_MS). */
export function forgetCachedRole(roleId: Id): void {
  for (const key of [...roleCache.keys()]) if (key.endsWith(`:${roleId}`)) roleCache.delete(key);
}
