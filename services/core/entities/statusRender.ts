// One status of a loaded page (statusPage.ts) as the API shows it: its cached rendering with what
// changes without an edit laid over it (counts, author, poll, quote) and the viewer's own fields.
import type { Id } from '../ids.ts';
import { type EffectiveRole } from '../roles/roles.ts';
import { matchFilters } from '../filters/match.ts';
import { roleBadges, type Account } from './account.ts';
import { presentFilterResults } from './filter.ts';
import { type NestedStatus } from './status.ts';
import { presentQuoteApproval, type QuoteApproval } from '../quotes/policy.ts';
import { shallowQuote, shownQuoteState, showsQuotedStatus } from './quote.ts';
import type { Quote, QuotedStatus } from './status.ts';
import { type Live, type LoadedPage } from './statusPage.ts';
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
  const proper = original ?? l;
  return presentQuoteApproval(proper, page.viewer?._id ?? null, {
    follows: page.quoteRelations?.following.has(proper.accountId),
  });
}
/** The viewer's own fields of a status (none without a viewer); `pinned` only on the viewer's own. */
export interface ViewerFields {
  favourited: boolean;
  reblogged: boolean;
  muted: boolean;
  bookmarked: boolean;
  filtered: ReturnType<typeof presentFilterResults>;
  pinned?: boolean;
}
export function viewerFields(page: LoadedPage, l: Live, nested: boolean): ViewerFields | null {
  const { viewer, state, shells } = page;
  if (!viewer || !state) return null;
  const shell = (shells.get(l._id) as CachedShell).s;
  // Filters match the status itself, or for a reblog wrapper the reblogged original.
  const proper = !nested && l.reblogOfId !== null ? (shells.get(l.reblogOfId)?.s ?? shell) : shell;
  const properId = !nested && l.reblogOfId !== null ? l.reblogOfId : l._id;
  const out: ViewerFields = {
    favourited: state.favourited.has(l._id),
    reblogged: state.reblogged.has(l._id),
    muted: !nested && l.conversationId !== null && state.mutedConversations.has(l.conversationId),
    bookmarked: state.bookmarked.has(l._id),
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
 * whose own quote the caller sets as a ShallowQuote.
 */
export function renderStatus(page: LoadedPage, l: Live, nested: boolean, shallow = false): NestedStatus {
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
  const own = viewerFields(page, l, nested);
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
