// User roles like Mastodon's: named, ordered by position, with a permission bitmask. Users without
// a role have the built-in "everyone" role (id -99, not stored).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface RoleDoc {
  _id: Id;
  name: string;
  nameLower: string;
  /** CSS hex colour or "". */
  color: string;
  /** Higher outranks lower; Owner 1000, Admin 100, Moderator 10 as in Mastodon's seeds. */
  position: number;
  /** Bitmask of PERMISSION_FLAGS (core/roles/permissions.ts). */
  permissions: number;
  /** Shown as a public badge on the profile. */
  highlighted: boolean;
  /** Users with this role must turn on two-factor authentication before using the pages (Mastodon's require_2fa). */
  require2fa?: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const roles = defineCollection<RoleDoc>('user_roles', [{ key: { nameLower: 1 }, name: 'name', unique: true }]);
