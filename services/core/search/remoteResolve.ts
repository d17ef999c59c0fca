// `resolve=true` searches look a remote account or status up over federation
// (services/core/activitypub/resolve.ts): WebFinger for `user@domain`, a fetch for a URL.
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { resolveRemote } from '../activitypub/resolve.ts';

export interface RemoteResolution {
  accounts: AccountDoc[];
  statuses: StatusDoc[];
}

/** The remote account or status `query` (a URL or `user@domain`) names, or null. Never throws. */
export async function resolveRemoteForSearch(core: Core, query: string): Promise<RemoteResolution | null> {
  try {
    const { account, status } = await resolveRemote(core, query);
    return { accounts: account ? [account] : [], statuses: status ? [status] : [] };
  } catch (err) {
    core.logger.info({ err, query }, 'search: remote resolution failed');
    return null;
  }
}
