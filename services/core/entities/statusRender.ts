// The one status renderer: a page of statuses (statusPage.ts) as the API shows it, each status its
// cached rendering with what changes without an edit laid over it (counts, author, poll, quote)
// and the viewer's own fields. A single status is a page of one; statusPageJson.ts writes the same
// page as spliced JSON.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { CachedAccount } from '../model/accounts.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { type EffectiveRole } from '../roles/roles.ts';
import { matchFilters } from '../filters/match.ts';
import { roleBadges, type Account } from './account.ts';
import { presentFilterResults } from './filter.ts';
import { type NestedStatus, type Status } from './status.ts';
import { quoteApprovalFor, quoteDecision, type QuoteApproval, type QuoteDecision } from '../quotes/policy.ts';
import { shallowQuote, shownQuoteState, showsQuotedStatus } from './quote.ts';
import type { Quote, QuotedStatus } from './status.ts';
import { loadStatusPage, type Live, type LoadedPage, type PageOptions } from './statusPage.ts';
import { type CachedShell } from './statusShells.ts';

/** A status's `quote` (a Quote, with the quoted status rendered and its own quote shallow). */
export function quoteOf(page: LoadedPage, l: Live): Quote | null {
  const q = l.quote;
  if (!q) return null;
  const quoted = q.quotedStatusId === null ? undefined : page.live?.get(q.quotedStatusId);
  const state = shownQuoteState(q, {
    quoted,
    authorUsable: quoted !== undefined && page.usable?.has(quoted.accountId) === true,
    viewerId: page.viewer?._id ?? null,
    relations: page.quoteRelations ?? null,
  });
  if (!quoted || !showsQuotedStatus(state) || !page.shells.has(quoted._id)) return { state, quoted_status: null };
  const inner = renderStatus(page, quoted, true, true) as unknown as QuotedStatus;
  inner.quote = shallowQuote(quoted.quote);
  return { state, quoted_status: inner };
}
/** A status's `quote_approval` for the page's viewer (a reblog wrapper: its original's). */
export function quoteApprovalOf(page: LoadedPage, l: Live, original: Live | null): QuoteApproval {
  return quoteApprovalFor((original ?? l).quoteApprovalPolicy ?? 0, quoteDecisionOf(page, l, original));
}
/** The page viewer's quote decision on a status (a reblog wrapper: its original's). */
export function quoteDecisionOf(page: LoadedPage, l: Live, original: Live | null): QuoteDecision {
  const proper = original ?? l;
  return quoteDecision(proper, page.viewer?._id ?? null, {
    follows: page.quoteRelations?.following.has(proper.accountId),
  });
}
/**
 * The viewer's own fields of a status (none without a viewer); `pinned` only on the viewer's own.
 * `properFlags`: a reblog wrapper's favourited/reblogged/bookmarked are its original's, as Mastodon
 * shows a single status rendered without preloaded relationships (`status.proper`); in lists they
 * are the wrapper's own.
 */
export interface ViewerFields {
  favourited: boolean;
  reblogged: boolean;
  muted: boolean;
  bookmarked: boolean;
  filtered: ReturnType<typeof presentFilterResults>;
  pinned?: boolean;
}
export function viewerFields(page: LoadedPage, l: Live, nested: boolean, properFlags = false): ViewerFields | null {
  const { viewer, state, shells } = page;
  if (!viewer || !state) return null;
  const shell = (shells.get(l._id) as CachedShell).s;
  // Filters match the status itself, or for a reblog wrapper the reblogged original.
  const proper = !nested && l.reblogOfId !== null ? (shells.get(l.reblogOfId)?.s ?? shell) : shell;
  const properId = !nested && l.reblogOfId !== null ? l.reblogOfId : l._id;
  const flagsOf = properFlags ? properId : l._id;
  const out: ViewerFields = {
    favourited: state.favourited.has(flagsOf),
    reblogged: state.reblogged.has(flagsOf),
    muted: !nested && l.conversationId !== null && state.mutedConversations.has(l.conversationId),
    bookmarked: state.bookmarked.has(flagsOf),
    filtered: presentFilterResults(
      matchFilters(page.active, { _id: properId, content: proper.content ?? '', spoilerText: proper.spoiler_text }),
    ),
  };
  if (l.accountId === viewer._id && l.reblogOfId === null && l.visibility !== 'direct')
    out.pinned = state.pinned.has(l._id);
  return out;
}
/** The Account entity of a page's author: roles from the user's role for local accounts. */
export function authorEntity(page: LoadedPage, accountId: Id): Account {
  const a = page.authors.get(accountId) as { entity: Account; role: EffectiveRole | null };
  return a.role === null ? a.entity : { ...a.entity, roles: roleBadges(a.role) };
}
/**
 * One status of a loaded page as an object (its `reblog` is left null). `shallow`: a quoted status,
 * whose own quote the caller sets as a ShallowQuote. `properFlags`: see viewerFields.
 */
export function renderStatus(
  page: LoadedPage,
  l: Live,
  nested: boolean,
  shallow = false,
  properFlags = false,
): NestedStatus {
  const shell = (page.shells.get(l._id) as CachedShell).s;
  const out: NestedStatus = {
    ...shell,
    account: authorEntity(page, l.accountId),
    reblogs_count: l.reblogsCount,
    favourites_count: l.favouritesCount,
    replies_count: l.repliesCount,
    poll: l.pollId === null ? null : (page.polls.get(l.pollId) ?? null),
    quote: shallow ? null : quoteOf(page, l),
    quotes_count: l.reblogOfId === null ? (l.quotesCount ?? 0) : 0,
    quote_approval: quoteApprovalOf(page, l, l.reblogOfId === null ? null : (page.live?.get(l.reblogOfId) ?? null)),
    reblog: null,
  };
  const own = viewerFields(page, l, nested, properFlags);
  if (own) {
    out.favourited = own.favourited;
    out.reblogged = own.reblogged;
    out.muted = own.muted;
    out.bookmarked = own.bookmarked;
    out.filtered = own.filtered;
    if (own.pinned !== undefined) out.pinned = own.pinned;
  }
  return out;
}

/** One item of a loaded page, with its reblogged original, as an object. */
export function renderItem(page: LoadedPage, item: LoadedPage['items'][number], properFlags = false): Status {
  const out: Status = renderStatus(page, item.status, false, false, properFlags);
  if (item.original) out.reblog = renderStatus(page, item.original, true);
  return out;
}

/** The statuses of `ids` that exist and the viewer may see, in order, rendered for the viewer. */
export async function presentStatusPage(
  core: Core,
  ids: Id[],
  viewer: CachedAccount | null,
  opts: PageOptions,
): Promise<Status[]> {
  const page = await loadStatusPage(core, ids, viewer, opts);
  return page.items.map((item) => renderItem(page, item));
}

/**
 * Statuses the caller has read and checked (or shows regardless: notifications, moderation), in
 * their order, rendered for the viewer. `properFlags`: see viewerFields.
 */
export async function presentStatuses(
  core: Core,
  docs: StatusDoc[],
  viewer: CachedAccount | null,
  opts: { properFlags?: boolean } = {},
): Promise<Status[]> {
  if (docs.length === 0) return [];
  const page = await loadStatusPage(
    core,
    docs.map((d) => d._id),
    viewer,
    { check: 'none', docs },
  );
  // Only a status whose author's account is gone is left out: callers pair statuses by position.
  if (page.items.length !== docs.length) throw new Error('statuses without their author cannot be rendered');
  return page.items.map((item) => renderItem(page, item, opts.properFlags));
}

/**
 * One status as the answer to an action on it (a reblog wrapper shows its original's flags).
 * `source`: delete-and-redraft answers carry `text` (the source) instead of `content`.
 */
export async function presentStatus(
  core: Core,
  doc: StatusDoc,
  viewer: CachedAccount | null,
  opts: { source?: boolean } = {},
): Promise<Status> {
  const [out] = await presentStatuses(core, [doc], viewer, { properFlags: true });
  if (!opts.source) return out;
  const { content: _content, ...rest } = out;
  return { ...rest, text: doc.text };
}
