// Which of an account's statuses a reader may list (GET /api/v1/accounts/:id/statuses, the profile
// page and its RSS feed): the visibilities the reader may see (all for the owner, private ones for
// followers, public and unlisted for everybody else) and the tabs' filters.
import type { Filter } from 'mongodb';
import type { Id } from '../ids.ts';
import type { StatusDoc, Visibility } from '../model/statuses.ts';
import { normalizeTagName } from '../text/extract.ts';

export interface AccountStatusesOptions {
  /** The visibilities the reader may see; null: all (the owner). */
  visibilities: Visibility[] | null;
  excludeReblogs?: boolean;
  excludeReplies?: boolean;
  onlyMedia?: boolean;
  tagged?: string | null;
}

/** What a logged-out visitor (and anyone who does not follow the author) may list. */
export const PUBLIC_LISTED: Visibility[] = ['public', 'unlisted'];

export function accountStatusesFilter(ownerId: Id, opts: AccountStatusesOptions): Filter<StatusDoc> {
  const filter: Filter<StatusDoc> = { accountId: ownerId, deletedAt: null };
  if (opts.visibilities) filter.visibility = { $in: opts.visibilities };
  if (opts.excludeReblogs) filter.reblogOfId = null;
  // Self-replies (threads) stay, as in Mastodon.
  if (opts.excludeReplies) filter.$or = [{ inReplyToId: null }, { inReplyToAccountId: ownerId }];
  if (opts.onlyMedia) filter['mediaIds.0'] = { $exists: true };
  const tag = opts.tagged?.trim();
  if (tag) filter.tagNames = normalizeTagName(tag.replace(/^#/, ''));
  return filter;
}
