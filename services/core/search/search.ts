// GET /api/v2/search: accounts, hashtags and statuses for one query, with Mastodon's rules for
// which kinds a query looks for (SearchService): a `#` query is no account search, a query with
// `@` and no space no hashtag or full-text search; a URL of a local (or known remote) account or
// status answers that object.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, visibleAccountFilter, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { tags, type TagDoc } from '../model/tags.ts';
import { searchAccounts, prefixRange } from '../discovery/accountSearch.ts';
import { filterVisible } from '../statuses/visibility.ts';
import { normalizeTagName } from '../text/extract.ts';
import { searchStatuses } from './statusSearch.ts';
import { resolveRemoteForSearch } from './remoteResolve.ts';
import { reviewedAmong } from '../trends/review.ts';

export type SearchType = 'accounts' | 'hashtags' | 'statuses';

export interface SearchRequest {
  q: string;
  type: SearchType | null;
  resolve: boolean;
  following: boolean;
  accountId?: Id;
  excludeUnreviewed: boolean;
  maxId?: Id;
  minId?: Id;
  limit: number;
  offset: number;
}

export interface SearchResults {
  accounts: AccountDoc[];
  /** Checked against the caller (render them with presentStatusPage's 'feed' check). */
  statuses: StatusDoc[];
  hashtags: TagDoc[];
}

const URL_RE = /^https?:\/\/\S+$/i;

/** A local or known remote account or status the URL names (status first), or null. */
async function lookUpUrl(core: Core, viewer: CachedAccount, url: string): Promise<SearchResults | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const base = new URL(core.config.baseUrl);
  const empty: SearchResults = { accounts: [], statuses: [], hashtags: [] };
  if (parsed.host === base.host) {
    const path = parsed.pathname.replace(/\/+$/, '');
    const statusMatch = /^\/(?:@[^/]+|users\/[^/]+\/statuses)\/(\d{1,20})$/.exec(path);
    if (statusMatch) {
      const st = await collection(core.db, statuses).findOne({
        _id: BigInt(statusMatch[1] as string),
        deletedAt: null,
      });
      const visible = st && st.reblogOfId === null ? await filterVisible(core, viewer, [st]) : [];
      return { ...empty, statuses: visible };
    }
    const accountMatch = /^\/(?:@|users\/)([A-Za-z0-9_]+)$/.exec(path);
    if (accountMatch) {
      const acct = await collection(core.db, accounts).findOne({
        usernameLower: (accountMatch[1] as string).toLowerCase(),
        domain: null,
        suspendedAt: null,
        ...visibleAccountFilter,
      });
      return { ...empty, accounts: acct ? [acct] : [] };
    }
    return empty;
  }
  // Known remote objects by their ActivityPub id.
  const st = await collection(core.db, statuses).findOne({ uri: url, deletedAt: null });
  if (st) return { ...empty, statuses: st.reblogOfId === null ? await filterVisible(core, viewer, [st]) : [] };
  const acct = await collection(core.db, accounts).findOne({ uri: url, suspendedAt: null, ...visibleAccountFilter });
  if (acct) return { ...empty, accounts: [acct] };
  return null;
}

/** Hashtags starting with the query (`#` optional): exact name first, then shorter, then by name. */
export async function searchHashtags(
  core: Core,
  q: string,
  opts: { limit: number; offset: number; excludeUnreviewed: boolean },
): Promise<TagDoc[]> {
  const name = normalizeTagName(q.trim().replace(/^#/, ''));
  if (!name || !/^[\p{L}\p{N}_·\u200c]+$/u.test(name)) return [];
  const want = opts.offset + opts.limit;
  // Read a little more than asked so the exact match and the shortest names come first.
  const found = await collection(core.db, tags)
    .find({ nameNormalized: prefixRange(name) })
    .limit(Math.max(want * 4, 40))
    .toArray();
  let list = found;
  if (opts.excludeUnreviewed) {
    const reviewed = await reviewedAmong(
      core,
      'tag',
      found.map((t) => t.nameNormalized),
    );
    list = found.filter((t) => reviewed.has(t.nameNormalized));
  }
  list.sort(
    (a, b) =>
      Number(b.nameNormalized === name) - Number(a.nameNormalized === name) ||
      a.nameNormalized.length - b.nameNormalized.length ||
      (a.nameNormalized < b.nameNormalized ? -1 : a.nameNormalized > b.nameNormalized ? 1 : 0),
  );
  return list.slice(opts.offset, want);
}

export async function search(core: Core, viewer: CachedAccount, r: SearchRequest): Promise<SearchResults> {
  const q = r.q.trim();
  const results: SearchResults = { accounts: [], statuses: [], hashtags: [] };
  if (!q) return results;
  // Mastodon ignores the offset unless one type is asked for.
  const offset = r.type === null ? 0 : r.offset;

  if (URL_RE.test(q)) {
    const found = await lookUpUrl(core, viewer, q);
    if (found && (found.accounts.length > 0 || found.statuses.length > 0)) return filterType(found, r.type);
    if (r.resolve) {
      const remote = await resolveRemoteForSearch(core, q);
      if (remote)
        return filterType(
          { accounts: remote.accounts, statuses: await filterVisible(core, viewer, remote.statuses), hashtags: [] },
          r.type,
        );
    }
    return results;
  }
  if (r.resolve && /^@?[^@\s]+@[^@\s]+$/.test(q)) {
    const remote = await resolveRemoteForSearch(core, q);
    if (remote && remote.accounts.length > 0) results.accounts = remote.accounts;
  }

  const wants = (t: SearchType) => r.type === null || r.type === t;
  const hasSpace = /\s/.test(q);
  const accountSearchable = !(q.startsWith('#') || (q.includes('@') && hasSpace));
  const hashtagSearchable = !q.includes('@');
  const fullTextSearchable = !((q.startsWith('#') || q.includes('@')) && !hasSpace);

  const [foundAccounts, foundTags, foundStatuses] = await Promise.all([
    wants('accounts') && accountSearchable && results.accounts.length === 0
      ? searchAccounts(core, viewer, { q, limit: r.limit, offset, following: r.following })
      : Promise.resolve(results.accounts),
    wants('hashtags') && hashtagSearchable
      ? searchHashtags(core, q, { limit: r.limit, offset, excludeUnreviewed: r.excludeUnreviewed })
      : Promise.resolve([]),
    wants('statuses') && fullTextSearchable
      ? searchStatuses(core, viewer, {
          q,
          limit: r.limit,
          offset,
          accountId: r.accountId,
          maxId: r.maxId,
          minId: r.minId,
        })
      : Promise.resolve([]),
  ]);
  return { accounts: foundAccounts, hashtags: foundTags, statuses: foundStatuses };
}

function filterType(found: SearchResults, type: SearchType | null): SearchResults {
  return {
    accounts: type === null || type === 'accounts' ? found.accounts : [],
    statuses: type === null || type === 'statuses' ? found.statuses : [],
    hashtags: [],
  };
}
