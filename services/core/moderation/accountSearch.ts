// Mastodon's AccountFilter: the admin accounts list's filters (GET /api/v1 and /api/v2/admin/accounts,
// the /admin/accounts page) as a MongoDB filter over accounts, and their two parameter forms.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { parseId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findPage, type PageParams } from '../db/pages.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { roles } from '../model/roles.ts';
import { railsBoolean } from '../railsParams.ts';
import { DEFAULT_PERMISSIONS } from '../roles/permissions.ts';
import { escapeRegex } from '../text/escapeRegex.ts';
import { parseCidr, parseIp } from './ipBlocks.ts';

/** How many accounts wait for their sign-up to be approved. */
export function countPendingAccounts(core: Core): Promise<number> {
  return collection(core.db, accounts).countDocuments({ pendingUser: true });
}

export interface AccountFilterInput {
  origin?: 'local' | 'remote';
  status?: 'active' | 'pending' | 'disabled' | 'silenced' | 'suspended' | 'sensitized';
  staff?: boolean;
  roleIds?: Id[];
  invitedBy?: string;
  username?: string;
  displayName?: string;
  byDomain?: string;
  email?: string;
  ip?: string;
}

/** The MongoDB filter for Mastodon's AccountFilter. */
export async function accountFilter(core: Core, f: AccountFilterInput): Promise<Filter<AccountDoc>> {
  const and: Filter<AccountDoc>[] = [];
  if (f.origin === 'local') and.push({ domain: null });
  if (f.origin === 'remote') and.push({ domain: { $ne: null } });
  const userConditions: Filter<UserDoc>[] = [];
  switch (f.status) {
    case 'active':
      and.push({ suspendedAt: null });
      break;
    case 'silenced':
      and.push({ silencedAt: { $ne: null } });
      break;
    case 'suspended':
      and.push({ suspendedAt: { $ne: null } });
      break;
    case 'sensitized':
      and.push({ sensitizedAt: { $ne: null } });
      break;
    case 'pending':
      userConditions.push({ approved: false });
      break;
    case 'disabled':
      userConditions.push({ disabled: true });
      break;
  }
  if (f.username) and.push({ usernameLower: { $regex: `^${escapeRegex(f.username.toLowerCase())}` } });
  if (f.displayName) and.push({ displayName: { $regex: escapeRegex(f.displayName), $options: 'i' } });
  if (f.byDomain) and.push({ domain: { $regex: `^${escapeRegex(f.byDomain.toLowerCase())}` } });
  if (f.email) userConditions.push({ emailLower: { $regex: escapeRegex(f.email.toLowerCase()) } });
  if (f.staff || f.roleIds) {
    const roleDocs = await collection(core.db, roles).find({}).toArray();
    let ids = roleDocs.map((r) => r._id);
    if (f.staff) ids = roleDocs.filter((r) => (r.permissions & ~DEFAULT_PERMISSIONS) !== 0).map((r) => r._id);
    if (f.roleIds) ids = ids.filter((id) => f.roleIds?.includes(id));
    userConditions.push({ roleId: { $in: ids } });
  }
  if (f.invitedBy) userConditions.push({ _id: { $in: [] } }); // no invites on this server
  let ipFiltered: Id[] | null = null;
  if (f.ip) {
    const range = parseCidr(f.ip);
    if (!range) return { _id: { $in: [] } };
    const withIp = await collection(core.db, users)
      .find({ signUpIp: { $ne: null } }, { projection: { accountId: 1, signUpIp: 1 } })
      .toArray();
    const bits = BigInt((range.family === 4 ? 32 : 128) - range.prefix);
    ipFiltered = withIp
      .filter((u) => {
        const ip = parseIp(u.signUpIp as string);
        return ip !== null && ip.family === range.family && ip.value >> bits === range.value >> bits;
      })
      .map((u) => u.accountId);
  }
  if (userConditions.length > 0) {
    const ids = (
      await collection(core.db, users)
        .find({ $and: userConditions }, { projection: { accountId: 1 } })
        .toArray()
    ).map((u) => u.accountId);
    and.push({ _id: { $in: ids } });
  }
  if (ipFiltered) and.push({ _id: { $in: ipFiltered } });
  return and.length === 0 ? {} : { $and: and };
}

/** A page of the accounts the filter matches, newest first. */
export async function adminAccountsPage(core: Core, f: AccountFilterInput, page: PageParams): Promise<AccountDoc[]> {
  return findPage(collection(core.db, accounts), await accountFilter(core, f), page);
}

/** The v1 query parameters (`local`, `pending`, `staff`, …). */
export function v1Filter(q: Record<string, unknown>): AccountFilterInput {
  const on = (k: string) => railsBoolean(q[k]) === true;
  const str = (k: string) => (typeof q[k] === 'string' && q[k] !== '' ? q[k] : undefined);
  const status = (['active', 'pending', 'disabled', 'silenced', 'suspended', 'sensitized'] as const).find(on);
  return {
    origin: on('local') ? 'local' : on('remote') ? 'remote' : undefined,
    status,
    staff: on('staff') || undefined,
    username: str('username'),
    displayName: str('display_name'),
    byDomain: str('by_domain'),
    email: str('email'),
    ip: str('ip'),
  };
}

export function v2Filter(q: Record<string, unknown>): AccountFilterInput {
  const str = (k: string) => (typeof q[k] === 'string' && q[k] !== '' ? q[k] : undefined);
  const origin = str('origin');
  const status = str('status');
  const rawRoles = q.role_ids;
  const roleIds =
    rawRoles === undefined
      ? undefined
      : (Array.isArray(rawRoles) ? rawRoles : [rawRoles]).map((r) => parseId(r)).filter((r): r is Id => r !== null);
  return {
    origin: origin === 'local' || origin === 'remote' ? origin : undefined,
    status: (['active', 'pending', 'disabled', 'silenced', 'suspended', 'sensitized'] as const).find(
      (s) => s === status,
    ),
    staff: str('permissions') === 'staff' || undefined,
    roleIds,
    invitedBy: str('invited_by'),
    username: str('username'),
    displayName: str('display_name'),
    byDomain: str('by_domain'),
    email: str('email'),
    ip: str('ip'),
  };
}
