// What every inbound activity handler gets: the core, the verified remote actor and the personal
// inbox it came to, and the one lookup most of them start with.
import type { Core } from '../../context.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { findLocalAccountByUsername } from '../../accounts/create.ts';
import { parseLocalUri } from '../uris.ts';

export interface Ctx {
  core: Core;
  actor: AccountDoc;
  inboxAccountId: bigint | null;
}

/** A local account named by an actor id (ours), usable as a target. */
export async function localAccountOf(core: Core, uri: string | null): Promise<AccountDoc | null> {
  if (!uri) return null;
  const parsed = parseLocalUri(core.config, uri);
  if (parsed?.kind !== 'actor' && parsed?.kind !== 'profile') return null;
  const account = await findLocalAccountByUsername(core, parsed.username);
  return account && !account.pendingUser ? account : null;
}
