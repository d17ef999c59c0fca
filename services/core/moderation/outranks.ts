// Staff may only act on accounts whose role ranks below their own (Mastodon's role.overrides?):
// the admin API and the moderation dashboard check it before every account action.
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { UserDoc } from '../model/users.ts';
import { roleOfUser } from '../roles/roles.ts';
import { forbidden } from '../errors.ts';
import { userOfAccount } from './accountActions.ts';

export async function assertOutranks(core: Core, actor: UserDoc, target: AccountDoc): Promise<void> {
  const targetUser = await userOfAccount(core, target);
  if (!targetUser) return;
  if (targetUser._id === actor._id) throw forbidden();
  const [mine, theirs] = await Promise.all([roleOfUser(core, actor), roleOfUser(core, targetUser)]);
  if (theirs.position >= mine.position && theirs.id !== '-99') throw forbidden();
}
