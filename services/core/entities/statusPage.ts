// Rendering a page of statuses (timelines, streaming) in few round trips. The viewer-independent
// part of each status (content, media, mentions, tags, application...) is cached in Redis as JSON
// ("shell"); everything that changes without an edit is read fresh and laid over it on every
// request: the counts, the author's account (counts, suspension), the poll, and the viewer's
// flags and filters. A shell is only used while the status's `edited_at` is the one it was
// rendered from, so an edit never shows stale content even when a racing render refilled the
// cache; StatusUpdated/StatusDeleted (and media edits) drop the entry as well.
//
// Round trips for a page of 20, in two parallel batches: first the cached renderings (this
// process's copies, else one Redis MGET), the statuses' live fields (the document cache: one
// script call), the viewer's filters (none: a Redis mark) and the viewer's marks on the statuses
// (one SMISMEMBER on their flag set); then, with the statuses known, the authors and their roles
// (this process's copies, else Redis), conversation mutes (only for a viewer who has some), polls
// when present, and for 'policy' pages the viewer's relations to the authors. Reblogged originals
// add one step; misses are rendered (statusShells.ts, in the second batch) and stored.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { accountView, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { defineViewOf, definePickView } from '../db/docViews.ts';
import { readThrough, writeThrough, type CacheWrite } from '../db/docCache.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { polls } from '../model/polls.ts';
import { EVERYONE_ROLE, roleOfUser, type EffectiveRole } from '../roles/roles.ts';
import { activeFilters, type ActiveFilter } from '../filters/match.ts';
import { loadViewerRelations, relationsForPolicy, visibleWith } from '../statuses/visibility.ts';
import { followedAmong } from '../graph/relations.ts';
import { presentAccount, type Account } from './account.ts';
import { withViewerFeatureApproval } from './accountViewer.ts';
import { presentPoll, type PollEntity } from './poll.ts';
import { LOCAL_RENDER_TTL_MS, noFiltersKey } from '../statuses/renderCache.ts';
import { viewerMarks, type ViewerState } from '../interactions/viewerFlags.ts';
import type { ViewerRelations } from '../statuses/visibility.ts';
import { needsFollowRelation } from '../quotes/policy.ts';
import { quotedIdsOf } from './quote.ts';
import { type CachedShell, readShells, version, renderMisses, roleIdsOf } from './statusShells.ts';

/**
 * The fields that change without an edit, read on every render: from the document cache
 * (db/docCache.ts), whose copies every write to the status drops. This process keeps them for a
 * second too (its own writes drop them at once; another process's counts and deletes show within
 * that second, as its newest pages do: db/pages.ts).
 */
const LIVE_LOCAL_TTL_MS = 1000;
const liveView = definePickView(
  statuses,
  'live',
  [
    'accountId',
    'reblogOfId',
    'visibility',
    'mentionedAccountIds',
    'conversationId',
    'pollId',
    'deletedAt',
    'editedAt',
    'reblogsCount',
    'favouritesCount',
    'repliesCount',
    // Quote posts: the quote's state changes without an edit, the count with others' quotes.
    'quote',
    'quotesCount',
    'quoteApprovalPolicy',
  ],
  // Read for every status of every page; the same bytes are parsed once (docCache.ts).
  { shareParsed: true, localTtlMs: LIVE_LOCAL_TTL_MS },
);
export type Live = NonNullable<typeof liveView._copy>;

/**
 * Authors, rendered (roles aside: they come from the user, and are laid over per request) and
 * cached with the account document, whose every write drops them; custom emoji changes show once
 * the entry expires (minutes). Each process keeps them for a few seconds as well.
 */
const authorView = defineViewOf(
  accountView,
  'entity',
  (core, docs) =>
    Promise.all(
      docs.map(async (d) => ({
        entity: await presentAccount(core, d, { role: EVERYONE_ROLE }),
        suspended: d.suspendedAt !== null,
        silenced: d.silencedAt !== null,
        local: d.domain === null,
        // Custom emojis of a remote author's poll options are those of its domain.
        domain: d.domain,
      })),
    ),
  { localTtlMs: LOCAL_RENDER_TTL_MS },
);

/**
 * Makes a write to the accounts of `accountIds` (a post's counters) and replaces their rendered
 * authors and account copies with the new ones, for the readers that follow (docCache writeThrough).
 */
export async function writeAuthorsThrough(core: Core, accountIds: Id[], change: CacheWrite<AccountDoc>): Promise<void> {
  await writeThrough(core, authorView, accountIds, change);
}

const NO_FILTERS_TTL_SECONDS = 60;

/**
 * The viewer's active filters; most viewers have none, which is remembered in Redis (dropped by
 * publishFiltersChanged on every filter change) so that it costs no query. A page read racing a
 * filter's creation can set the mark again after the drop: the short expiry bounds that.
 */
async function viewerFilters(core: Core, accountId: Id): Promise<ActiveFilter[]> {
  if ((await core.redis.exists(noFiltersKey(accountId))) === 1) return [];
  const active = await activeFilters(core, accountId);
  if (active.length === 0) await core.redis.set(noFiltersKey(accountId), '1', 'EX', NO_FILTERS_TTL_SECONDS);
  return active;
}

export interface PageOptions {
  /**
   * 'policy': check every status against the viewer (StatusPolicy: blocks, follows for private).
   * 'feed': home and list feeds, which hold only what the fan-out let in and which the graph
   * events keep clean (Mastodon does not re-check them on read either), and search results,
   * checked when they were found: deleted statuses and unavailable authors are still dropped.
   * 'none': `docs` the caller checked, or shows whatever their state (notifications, moderation,
   * the answer to an action on a status): every one that still has its author is rendered.
   */
  check: 'policy' | 'feed' | 'none';
  /**
   * Public and hashtag feeds: leave out statuses of silenced ("limited") authors the viewer does
   * not follow (the viewer's own stay), as services/core/moderation/limited.ts does elsewhere.
   * Needs `check: 'policy'` (which loads whom the viewer follows).
   */
  hideLimited?: boolean;
  /**
   * Statuses of the page the caller has just read whole (a search's read-back): their live fields
   * are not read again, and a missing rendering is made from them.
   */
  docs?: readonly StatusDoc[];
  /** `docs` were made by this request (a new post's answer): they have no preview card yet. */
  justPosted?: boolean;
}

/** A page's statuses with everything their rendering for the viewer needs (loadStatusPage). */
export interface LoadedPage {
  /** The statuses the viewer may see, in page order, each with its reblogged original. */
  items: { status: Live; original: Live | null }[];
  /** The cached renderings of every status in `items`. */
  shells: ReadonlyMap<bigint, CachedShell>;
  /**
   * The authors, rendered without roles (`entity`), and for local ones the role whose badges are
   * laid over (`role`; null: remote, the entity as it is).
   */
  authors: ReadonlyMap<bigint, { entity: Account; role: EffectiveRole | null }>;
  polls: ReadonlyMap<bigint, PollEntity>;
  viewer: CachedAccount | null;
  state: ViewerState | null;
  active: ActiveFilter[];
  /**
   * The viewer's relations to the authors of quoted statuses and of statuses whose quote policy
   * names followers (null: the page has none, or no viewer).
   */
  quoteRelations?: ViewerRelations | null;
  /** Live fields of every status read for the page (quoted statuses too). */
  live?: ReadonlyMap<bigint, Live>;
  /** Authors whose account is usable (not suspended). */
  usable?: ReadonlySet<bigint>;
}

/** The viewer's marks on a page's statuses, with those on the originals they reblog. */
async function withOriginals(page: Promise<ViewerState>, ...others: (Promise<ViewerState> | undefined)[]) {
  const [state, ...rest] = await Promise.all([page, ...others]);
  for (const more of rest) {
    if (!more) continue;
    for (const id of more.favourited) state.favourited.add(id);
    for (const id of more.reblogged) state.reblogged.add(id);
    for (const id of more.bookmarked) state.bookmarked.add(id);
    for (const id of more.pinned) state.pinned.add(id);
  }
  return state;
}

/** Loads what rendering the statuses of `ids` that exist and the viewer may see needs. */
export async function loadStatusPage(
  core: Core,
  ids: Id[],
  viewer: CachedAccount | null,
  opts: PageOptions,
): Promise<LoadedPage> {
  if (ids.length === 0)
    return { items: [], shells: new Map(), authors: new Map(), polls: new Map(), viewer, state: null, active: [] };
  const known = new Map<bigint, StatusDoc>((opts.docs ?? []).map((d) => [d._id, d]));
  const liveOf = async (want: Id[]) => [...(await readThrough(core, liveView, want)).values()];
  const marksOf = (want: Id[]) => (viewer ? viewerMarks(core, viewer._id, want) : null);
  // A status this request just made has no cached rendering yet: rendered beside the first batch (ADR 0022).
  const early = new Set(opts.justPosted ? ids.filter((id) => known.has(id)) : []);
  const renderingEarly = early.size > 0 ? renderMisses(core, [...early], known, true) : null;
  // Awaited in the second batch; a first batch that fails first must not leave it unhandled.
  renderingEarly?.catch(() => undefined);
  // First batch: the cached renderings and live fields of the page, the viewer's filters and
  // marks (their conversation mutes wait for the conversations: the second batch).
  const [shells, pageLive, active, pageMarks] = await Promise.all([
    readShells(
      core,
      ids.filter((id) => !early.has(id)),
    ),
    liveOf(ids.filter((id) => !known.has(id))),
    viewer ? viewerFilters(core, viewer._id) : [],
    marksOf(ids),
  ]);
  const live = new Map<bigint, Live>([...known.values(), ...pageLive].map((l) => [l._id, l]));
  // Reblogs: their originals too.
  const originalIds = [
    ...new Set([...live.values()].map((l) => l.reblogOfId).filter((r): r is Id => r !== null && !live.has(r))),
  ];
  // Statuses the page's statuses refer to join `live` and `shells`; their viewer's marks come back.
  const addReferenced = async (ids: Id[]): Promise<Awaited<ReturnType<typeof viewerMarks>> | null> => {
    if (ids.length === 0) return null;
    const [more, moreShells, marks] = await Promise.all([liveOf(ids), readShells(core, ids), marksOf(ids)]);
    for (const l of more) live.set(l._id, l);
    for (const [k, v] of moreShells) shells.set(k, v);
    return marks;
  };
  const originalMarks = await addReferenced(originalIds);
  // Quoted statuses: one more step, only for pages that quote something.
  const quotedMarks = await addReferenced(quotedIdsOf(live.values()).filter((q) => !live.has(q)));

  // Second batch: renderings that are missing or older than the last edit, the authors and their
  // roles, the viewer's flags, polls, and (for 'policy') the viewer's relations to the authors.
  // 'none' renders the deleted statuses it was given, and the originals they reblog, too.
  const shown = opts.check === 'none' ? new Set(ids.flatMap((id) => [id, live.get(id)?.reblogOfId ?? id])) : null;
  const all = [...live.values()].filter((l) => !l.deletedAt || shown?.has(l._id));
  const stale = all.filter((l) => !early.has(l._id) && shells.get(l._id)?.v !== version(l)).map((l) => l._id);
  const authorIds = [...new Set(all.map((l) => l.accountId))];
  // Only a page's own statuses show `muted` (not the originals they reblog).
  const conversationIds = ids.map((id) => live.get(id)?.conversationId ?? null).filter((c): c is Id => c !== null);
  const pollIds = all.map((l) => l.pollId).filter((p): p is Id => p !== null);
  // Relations quotes need (what the viewer may see of quoted statuses, who follows whom for a
  // policy naming followers): those of a 'policy' page cover them; others read them only then.
  const quoteRelationIds = quoteRelationAuthors(live, viewer);
  const [rendered, authorDocs, roleIds, state, pollDocs, relations, quoteRelations] = await Promise.all([
    renderingEarly
      ? Promise.all([renderingEarly, renderMisses(core, stale, known)]).then(([a, b]) => new Map([...a, ...b]))
      : renderMisses(core, stale, known),
    readThrough(core, authorView, authorIds),
    roleIdsOf(core, authorIds),
    pageMarks ? withOriginals(pageMarks(conversationIds), originalMarks?.([]), quotedMarks?.([])) : null,
    findInOrder(collection(core.db, polls), pollIds),
    // Authors' availability comes from authorDocs (below): the relations need no account query.
    opts.check === 'policy' ? relationsForPolicy(core, viewer, all) : null,
    // Quotes read the viewer's full relations to the authors they involve (a page's policy check
    // reads only what visibleWith needs).
    quoteRelationIds.length > 0 ? loadViewerRelations(core, viewer, quoteRelationIds, true) : null,
  ]);
  for (const [k, v] of rendered) shells.set(k, v);
  const authors = new Map<bigint, { entity: Account; role: EffectiveRole | null }>();
  const usable = new Set<bigint>();
  const silenced = new Set<bigint>();
  const domains = new Map<bigint, string | null>();
  for (const [id, a] of authorDocs) {
    domains.set(id, a.domain ?? null);
    if (!a.suspended) usable.add(id);
    if (a.silenced) silenced.add(id);
    if (!a.local) {
      authors.set(id, { entity: a.entity, role: null });
      continue;
    }
    const roleId = roleIds.get(id) ?? null;
    authors.set(id, { entity: a.entity, role: roleId === null ? EVERYONE_ROLE : await roleOfUser(core, { roleId }) });
  }
  // The viewer's feature_approval outcome over the cached (viewer-less) author entities.
  if (viewer) {
    const list = [...authors.entries()];
    const shown = await withViewerFeatureApproval(
      core,
      list.map(([, a]) => a.entity),
      viewer._id,
    );
    list.forEach(([id, a], i) => authors.set(id, { ...a, entity: shown[i] }));
  }
  if (opts.hideLimited && relations && viewer) {
    // Whether the viewer follows the silenced authors (most pages have none).
    const ask = [...silenced].filter((id) => id !== viewer._id && !relations.following.has(id));
    for (const id of await followedAmong(core, viewer._id, ask)) relations.following.add(id);
  }
  const pollById = new Map<bigint, PollEntity>();
  for (const p of pollDocs)
    pollById.set(p._id, await presentPoll(core, p, viewer?._id ?? null, domains.get(p.accountId) ?? null));

  const visible = (l: Live): boolean => {
    if (opts.check === 'none') return shells.has(l._id) && authors.has(l.accountId);
    if (l.deletedAt || !usable.has(l.accountId) || !shells.has(l._id)) return false;
    if (
      opts.hideLimited &&
      silenced.has(l.accountId) &&
      l.accountId !== viewer?._id &&
      !relations?.following.has(l.accountId)
    )
      return false;
    if (!relations) return true;
    return visibleWith(relations, l as StatusDoc);
  };

  const items: LoadedPage['items'] = [];
  for (const id of ids) {
    const l = live.get(id);
    if (!l || !visible(l)) continue;
    if (l.reblogOfId === null) {
      items.push({ status: l, original: null });
      continue;
    }
    const original = live.get(l.reblogOfId);
    if (original && visible(original)) items.push({ status: l, original });
    // Given statuses show as they are, a reblog without its original too.
    else if (opts.check === 'none') items.push({ status: l, original: null });
  }
  return {
    items,
    shells,
    authors,
    polls: pollById,
    viewer,
    state,
    active,
    quoteRelations: quoteRelationIds.length > 0 ? quoteRelations : null,
    live,
    usable,
  };
}

/** Authors whose relation to the viewer quotes on the page need (see loadStatusPage). */
function quoteRelationAuthors(live: ReadonlyMap<bigint, Live>, viewer: CachedAccount | null): Id[] {
  const out = new Set<bigint>();
  for (const l of live.values()) {
    if (l.deletedAt) continue;
    const q = l.quote;
    if (q?.state === 'accepted' && q.quotedAccountId !== null) out.add(q.quotedAccountId);
    if (viewer && needsFollowRelation(l, viewer._id)) out.add(l.accountId);
  }
  return [...out];
}
