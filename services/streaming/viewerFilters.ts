// What each connected viewer does not want to see, as Mastodon's streaming server checks it per
// message: accounts blocked either way or muted (authors and mentioned accounts), domains the
// viewer blocks, the viewer's chosen languages (public and hashtag streams) and custom filters
// (`hide` drops the event, other matches travel in `filtered`). Loaded for many viewers at once:
// one batch of queries whatever the number of connections, refreshed by the server's sweep.
import type { Core } from '../core/context.ts';
import type { Id } from '../core/ids.ts';
import { collection } from '../core/db/mongo.ts';
import { blocks } from '../core/model/blocks.ts';
import { mutes } from '../core/model/mutes.ts';
import { accountDomainBlocks } from '../core/model/accountDomainBlocks.ts';
import { users } from '../core/model/users.ts';
import { filters } from '../core/model/filters.ts';
import { filtersWithEntries, type ActiveFilter } from '../core/filters/match.ts';

export interface ViewerFilter {
  /** Account ids (strings, as payloads carry them) blocked either way or muted. */
  hidden: Set<string>;
  blockedDomains: Set<string>;
  /** null: every language. */
  chosenLanguages: string[] | null;
  filters: ActiveFilter[];
}

export const EMPTY_FILTER: ViewerFilter = {
  hidden: new Set(),
  blockedDomains: new Set(),
  chosenLanguages: null,
  filters: [],
};

function group<T>(list: T[], key: (t: T) => bigint): Map<bigint, T[]> {
  const out = new Map<bigint, T[]>();
  for (const item of list) {
    const k = key(item);
    const bucket = out.get(k);
    if (bucket) bucket.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** The filters of every account in `accountIds`, in one batch of queries. */
export async function loadViewerFilters(
  core: Core,
  accountIds: Id[],
  now = new Date(),
): Promise<Map<bigint, ViewerFilter>> {
  const ids = [...new Set(accountIds)];
  const out = new Map<bigint, ViewerFilter>();
  if (ids.length === 0) return out;
  const [mine, theirs, muted, domains, userDocs, filterDocs] = await Promise.all([
    collection(core.db, blocks)
      .find({ accountId: { $in: ids } }, { projection: { accountId: 1, targetAccountId: 1 } })
      .toArray(),
    collection(core.db, blocks)
      .find({ targetAccountId: { $in: ids } }, { projection: { accountId: 1, targetAccountId: 1 } })
      .toArray(),
    collection(core.db, mutes)
      .find({ accountId: { $in: ids } })
      .toArray(),
    collection(core.db, accountDomainBlocks)
      .find({ accountId: { $in: ids } }, { projection: { accountId: 1, domain: 1 } })
      .toArray(),
    collection(core.db, users)
      .find({ accountId: { $in: ids } }, { projection: { accountId: 1, settings: 1 } })
      .toArray(),
    collection(core.db, filters)
      .find({ accountId: { $in: ids }, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] })
      .toArray(),
  ]);
  const filtersBy = group(await filtersWithEntries(core, filterDocs), (f) => f.filter.accountId);
  const theirsBy = group(theirs, (b) => b.targetAccountId);
  const mineBy = group(mine, (b) => b.accountId);
  const mutedBy = group(muted, (m) => m.accountId);
  const domainsBy = group(domains, (d) => d.accountId);
  const userBy = new Map(userDocs.map((u) => [u.accountId, u]));
  for (const id of ids) {
    const languages = userBy.get(id)?.settings.chosenLanguages;
    out.set(id, {
      hidden: new Set([
        ...(mineBy.get(id) ?? []).map((b) => String(b.targetAccountId)),
        ...(theirsBy.get(id) ?? []).map((b) => String(b.accountId)),
        ...(mutedBy.get(id) ?? [])
          .filter((m) => m.expiresAt === null || m.expiresAt > now)
          .map((m) => String(m.targetAccountId)),
      ]),
      blockedDomains: new Set((domainsBy.get(id) ?? []).map((d) => d.domain)),
      chosenLanguages: languages && languages.length > 0 ? languages : null,
      filters: filtersBy.get(id) ?? [],
    });
  }
  return out;
}
