// The Quote, ShallowQuote and QuoteApproval entities (mastodon-api-entities.md §38), shared by the
// renderers of single statuses (status.ts) and of pages (statusPage.ts, statusPageJson.ts) so they
// agree. A status's `quote` is a Quote {state, quoted_status}; the quoted status carries its own
// quote as a ShallowQuote {state, quoted_status_id}, which stops the recursion.
import { Type, type Static } from '@sinclair/typebox';
import type { Id } from '../ids.ts';
import type { StatusDoc, StatusQuote } from '../model/statuses.ts';
import { visibleWith, type PolicyFields, type ViewerRelations } from '../statuses/visibility.ts';

export const ShallowQuoteEntity = Type.Object({
  state: Type.String(),
  quoted_status_id: Type.Union([Type.String(), Type.Null()]),
});
export type ShallowQuote = Static<typeof ShallowQuoteEntity>;

export const QuoteApprovalEntity = Type.Object({
  automatic: Type.Array(Type.String()),
  manual: Type.Array(Type.String()),
  current_user: Type.String(),
});

/** What rendering a quote needs to know about the quoted status and the viewer. */
export interface QuotedFacts {
  /** The quoted status (undefined: unknown here, or gone). */
  quoted: (PolicyFields & Pick<StatusDoc, 'reblogOfId'>) | undefined;
  /** Whether its author's account is usable (not suspended). */
  authorUsable: boolean;
  viewerId: Id | null;
  /** The viewer's relations to the quoted author (null: no viewer). */
  relations: ViewerRelations | null;
}

/**
 * The state shown to the viewer (Mastodon's BaseQuoteSerializer#state and
 * StatusFilter#filter_state_for_quote): the stored state, except that an accepted quote of a
 * status that is gone reads `deleted`; one the viewer may not see reads `unauthorized`; else, in
 * this order, `blocked_domain` (the viewer blocks the quoted author's domain), `blocked_account`,
 * `muted_account`. The viewer's own quoted posts are never filtered.
 */
export function shownQuoteState(q: StatusQuote, f: QuotedFacts): string {
  if (q.state !== 'accepted') return q.state;
  if (!f.quoted || f.quoted.deletedAt || f.quoted.reblogOfId !== null) return 'deleted';
  if (f.viewerId !== null && f.viewerId === f.quoted.accountId) return 'accepted';
  if (!f.authorUsable) return 'unauthorized';
  const rel: ViewerRelations = f.relations ?? {
    viewerId: null,
    following: new Set(),
    blockedBy: new Set(),
    blocking: new Set(),
    unavailable: new Set(),
  };
  if (!visibleWith(rel, f.quoted)) return 'unauthorized';
  if (f.viewerId === null) return 'accepted';
  const author = f.quoted.accountId;
  if (rel.domainBlocked?.has(author)) return 'blocked_domain';
  if (rel.blocking.has(author)) return 'blocked_account';
  if (rel.muting?.has(author)) return 'muted_account';
  return 'accepted';
}

/**
 * Whether the quoted status is rendered inside the Quote: Mastodon renders it for every accepted
 * quote but an `unauthorized` one (a client hides filtered ones behind a notice).
 */
export function showsQuotedStatus(state: string): boolean {
  return state === 'accepted' || state === 'blocked_account' || state === 'blocked_domain' || state === 'muted_account';
}

/**
 * The ShallowQuote of a quoted status's own quote: its stored state, and the id of what it quotes
 * while accepted (the second level is not loaded).
 */
export function shallowQuote(q: StatusQuote | null | undefined): ShallowQuote | null {
  if (!q) return null;
  return {
    state: q.state,
    quoted_status_id: q.state === 'accepted' && q.quotedStatusId !== null ? String(q.quotedStatusId) : null,
  };
}

/** Ids of the statuses quoted (accepted quotes) by `list`. */
export function quotedIdsOf(list: Iterable<Pick<StatusDoc, 'quote' | 'deletedAt'>>): Id[] {
  const out = new Set<bigint>();
  for (const s of list)
    if (!s.deletedAt && s.quote?.state === 'accepted' && s.quote.quotedStatusId !== null)
      out.add(s.quote.quotedStatusId);
  return [...out];
}
