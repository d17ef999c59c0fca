// Who on the staff holds a permission: the recipients of admin notifications and e-mails.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { roles } from '../model/roles.ts';
import { users, type UserDoc } from '../model/users.ts';
import { accounts } from '../model/accounts.ts';
import { hasPermission, type Permission } from '../roles/permissions.ts';

/** Usable logins (confirmed, approved, not disabled, account not suspended) whose role grants `permission`. */
export async function staffWith(core: Core, permission: Permission): Promise<UserDoc[]> {
  const roleIds = (await collection(core.db, roles).find({}).toArray())
    .filter((r) => hasPermission(r.permissions, permission))
    .map((r) => r._id);
  if (roleIds.length === 0) return [];
  const candidates = await collection(core.db, users)
    .find({ roleId: { $in: roleIds }, disabled: false, approved: true, confirmedAt: { $ne: null } })
    .toArray();
  if (candidates.length === 0) return [];
  const active = new Set(
    (
      await collection(core.db, accounts)
        .find({ _id: { $in: candidates.map((u) => u.accountId) }, suspendedAt: null }, { projection: { _id: 1 } })
        .toArray()
    ).map((a) => a._id),
  );
  return candidates.filter((u) => active.has(u.accountId));
}
