// What the public pages read, as a logged-out visitor sees it through the API: accounts as
// /api/v1/accounts/lookup finds them, statuses through the same visibility policy and
// rendered-status caches as /api/v1/statuses/:id and the timelines (presentStatusPage), threads as
// /context, hashtag feeds under the feed-access settings, and the instance documents. No rule of
// its own: each read is a core operation with the visitor (viewer null).
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../core/model/statuses.ts';
import { recentlyPinnedIds } from '../../core/interactions/pins.ts';
import { findVisibleAccount, findVisibleAccountByName, parseAcct } from '../../core/accounts/queries.ts';
import { presentAccount, type Account } from '../../core/entities/account.ts';
import type { Status } from '../../core/entities/status.ts';
import { presentStatusPage } from '../../core/entities/statusRender.ts';
import { findVisibleStatus } from '../../core/statuses/visibility.ts';
import { statusContext } from '../../core/statuses/context.ts';
import { accountStatusesFilter, PUBLIC_LISTED } from '../../core/statuses/accountStatuses.ts';
import { domainPolicy } from '../../core/moderation/domainBlocks.ts';
import { feedOrigin, getFeedAccess } from '../../core/settings/feedAccess.ts';
import { normalizeTagName } from '../../core/text/extract.ts';
import { pageParams, type PageParams } from '../../api/pagination.ts';
import { pageIdsOf } from '../../core/db/pages.ts';

/** Statuses per page, as Mastodon's public pages. */
export const PAGE_SIZE = 20;

export function pageOf(query: unknown): PageParams {
  return pageParams(
    { ...(query as object), limit: String(PAGE_SIZE) },
    { defaultLimit: PAGE_SIZE, maxLimit: PAGE_SIZE },
  );
}

/**
 * The account a `/@name` or `/@name@domain` page shows: local accounts of approved users, remote
 * accounts already known here whose server is not refused (suspended domains, and every domain not
 * allowed in limited federation mode). Suspended accounts are found (their page says so).
 */
export async function publicAccount(core: Core, acct: string): Promise<AccountDoc | null> {
  const parsed = parseAcct(core, acct);
  if (!parsed) return null;
  const found = await findVisibleAccountByName(core, parsed.username, parsed.domain);
  if (!found) return null;
  if (found.domain !== null && (await domainPolicy(core, found.domain)).rejected) return null;
  return found;
}

export async function presentPublicAccount(core: Core, doc: AccountDoc): Promise<Account> {
  const moved = doc.movedToAccountId !== null ? await findVisibleAccount(core, doc.movedToAccountId) : null;
  return presentAccount(core, doc, { moved });
}

/** The statuses of `ids` the visitor may see, rendered as the API renders them (from its caches). */
export function visibleStatuses(core: Core, ids: Id[], hideLimited = false): Promise<Status[]> {
  return presentStatusPage(core, ids, null, { check: 'policy', hideLimited });
}

export type ProfileTab = 'posts' | 'with_replies' | 'media';

/** A page of the profile's statuses for the visitor (public and unlisted), newest first. */
export async function profileStatuses(
  core: Core,
  owner: AccountDoc,
  tab: ProfileTab,
  page: PageParams,
): Promise<Status[]> {
  const filter = accountStatusesFilter(owner._id, {
    visibilities: PUBLIC_LISTED,
    excludeReplies: tab === 'posts',
    onlyMedia: tab === 'media',
    excludeReblogs: tab === 'media',
  });
  return visibleStatuses(core, await pageIdsOf(core.db, statuses, filter, page));
}

/** The profile's pinned statuses the visitor may see, most recently pinned first. */
export async function pinnedStatuses(core: Core, owner: AccountDoc): Promise<Status[]> {
  return visibleStatuses(core, await recentlyPinnedIds(core, owner._id, 5));
}

/** The account's public statuses without replies and boosts: the RSS feed's items. */
export async function feedStatuses(core: Core, owner: AccountDoc, tag: string | null): Promise<Status[]> {
  const filter = accountStatusesFilter(owner._id, {
    visibilities: PUBLIC_LISTED,
    excludeReplies: true,
    excludeReblogs: true,
    tagged: tag,
  });
  return visibleStatuses(core, await pageIdsOf(core.db, statuses, filter, pageOf({})));
}

export interface Thread {
  status: Status;
  doc: StatusDoc;
  ancestors: Status[];
  descendants: Status[];
}

/**
 * A status of `owner` that the visitor may see (a boost is not a page of its own), with the
 * ancestors and descendants the visitor may see, as /api/v1/statuses/:id/context (logged-out limits).
 */
export async function statusOf(core: Core, owner: AccountDoc, rawId: string): Promise<StatusDoc | null> {
  const id = parseId(rawId);
  if (id === null) return null;
  const doc = await findVisibleStatus(core, null, id);
  if (!doc || doc.accountId !== owner._id || doc.reblogOfId !== null) return null;
  return doc;
}

export async function thread(core: Core, doc: StatusDoc): Promise<Thread | null> {
  const { ancestors, descendants } = await statusContext(core, null, doc);
  const all = await visibleStatuses(
    core,
    [...ancestors, doc, ...descendants].map((s) => s._id),
  );
  const at = all.findIndex((s) => s.id === String(doc._id));
  if (at < 0) return null;
  return { status: all[at], doc, ancestors: all.slice(0, at), descendants: all.slice(at + 1) };
}

/**
 * A page of the hashtag's public statuses as the feed-access settings let a logged-out visitor read
 * them (/api/v1/timelines/tag/:hashtag); null when the visitor may read none.
 */
export async function tagStatuses(core: Core, rawName: string, page: PageParams): Promise<Status[] | null> {
  const name = normalizeTagName(rawName.trim().replace(/^#/, ''));
  if (!name) return [];
  const origin = feedOrigin(
    (await getFeedAccess(core)).topic,
    { user: false, viewFeeds: false },
    {
      local: false,
      remote: false,
    },
  );
  if (origin === 'none') return null;
  const filter: Parameters<typeof pageIdsOf<StatusDoc>>[2] = {
    visibility: 'public',
    reblogOfId: null,
    deletedAt: null,
    tagNames: name,
  };
  if (origin === 'local') filter.local = true;
  else if (origin === 'remote') filter.local = false;
  return visibleStatuses(core, await pageIdsOf(core.db, statuses, filter, page), true);
}
