// The hook `resolve=true` searches call to look a remote account or status up over federation.
// Federation (services/core/activitypub/) installs the real resolver with `setRemoteResolver` at
// start-up; until then a resolve search answers from local data only.
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { StatusDoc } from '../model/statuses.ts';

export interface RemoteResolution {
  accounts: AccountDoc[];
  statuses: StatusDoc[];
}

export type RemoteResolver = (core: Core, query: string) => Promise<RemoteResolution | null>;

let resolver: RemoteResolver | null = null;

export function setRemoteResolver(r: RemoteResolver | null): void {
  resolver = r;
}

/** The remote account or status `query` (a URL or `user@domain`) names, or null. Never throws. */
export async function resolveRemoteForSearch(core: Core, query: string): Promise<RemoteResolution | null> {
  if (!resolver) return null;
  try {
    return await resolver(core, query);
  } catch (err) {
    core.logger.info({ err, query }, 'search: remote resolution failed');
    return null;
  }
}
