// Mastodon's role permission flags (app/models/user_role.rb), by name. `administrator` grants all.
export const PERMISSION_FLAGS = {
  administrator: 1 << 0,
  view_devops: 1 << 1,
  view_audit_log: 1 << 2,
  view_dashboard: 1 << 3,
  manage_reports: 1 << 4,
  manage_federation: 1 << 5,
  manage_settings: 1 << 6,
  manage_blocks: 1 << 7,
  manage_taxonomies: 1 << 8,
  manage_appeals: 1 << 9,
  manage_users: 1 << 10,
  manage_invites: 1 << 11,
  manage_rules: 1 << 12,
  manage_announcements: 1 << 13,
  manage_custom_emojis: 1 << 14,
  manage_webhooks: 1 << 15,
  invite_users: 1 << 16,
  manage_roles: 1 << 17,
  manage_user_access: 1 << 18,
  delete_user_data: 1 << 19,
  /** Mastodon 4.5: read public and hashtag feeds whose access setting is `disabled`. */
  view_feeds: 1 << 20,
} as const;

export type Permission = keyof typeof PERMISSION_FLAGS;

export const ALL_PERMISSIONS = Object.values(PERMISSION_FLAGS).reduce((a, b) => a | b, 0);
/** What every user may do (Mastodon's Flags::DEFAULT). */
export const DEFAULT_PERMISSIONS = PERMISSION_FLAGS.invite_users;

const f = PERMISSION_FLAGS;
const MODERATION =
  f.view_dashboard |
  f.view_audit_log |
  f.manage_users |
  f.manage_user_access |
  f.delete_user_data |
  f.manage_reports |
  f.manage_appeals |
  f.manage_federation |
  f.manage_blocks |
  f.manage_taxonomies |
  f.manage_invites;
const ADMINISTRATION =
  f.manage_settings |
  f.manage_rules |
  f.manage_roles |
  f.manage_webhooks |
  f.manage_custom_emojis |
  f.manage_announcements;

/** The built-in roles, as Mastodon seeds them. */
export const BUILT_IN_ROLES = [
  {
    name: 'Moderator',
    position: 10,
    permissions: f.view_dashboard | f.view_audit_log | f.manage_users | f.manage_reports | f.manage_taxonomies,
    highlighted: true,
  },
  {
    name: 'Admin',
    position: 100,
    permissions: MODERATION | ADMINISTRATION | f.invite_users | f.view_devops,
    highlighted: true,
  },
  { name: 'Owner', position: 1000, permissions: f.administrator, highlighted: true },
] as const;

export function isPermission(name: string): name is Permission {
  return Object.hasOwn(PERMISSION_FLAGS, name);
}

/** True when a permission bitmask grants `permission` (administrator grants everything). */
export function hasPermission(mask: number, permission: Permission): boolean {
  if ((mask & PERMISSION_FLAGS.administrator) !== 0) return true;
  const flag = PERMISSION_FLAGS[permission];
  return (mask & flag) === flag;
}

/** Bitmask from permission names; throws on an unknown name. */
export function permissionMask(names: readonly string[]): number {
  let mask = 0;
  for (const n of names) {
    if (!isPermission(n)) throw new Error(`unknown permission: ${n}`);
    mask |= PERMISSION_FLAGS[n];
  }
  return mask;
}
