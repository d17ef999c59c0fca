// Reading users (the logins behind local accounts) by id.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { users, type UserDoc } from '../model/users.ts';

/** The user, whatever its state; null when there is none. */
export function findUser(core: Core, id: Id): Promise<UserDoc | null> {
  return collection(core.db, users).findOne({ _id: id });
}

/** How many users have the role. */
export function countUsersWithRole(core: Core, roleId: Id): Promise<number> {
  return collection(core.db, users).countDocuments({ roleId });
}
