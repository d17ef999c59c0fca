// Full-text status search over what the caller may see, newest first: the index proposes ids
// (statusIndex.ts: the caller's own scope merged with the public scope), each candidate is read
// back from MongoDB and checked against the query and the visibility policy. A page costs three
// round trips in sequence: the index walks (one script call per scope, in parallel), the
// read-back of the candidates (one `$in`), and one parallel batch for the policy (authors,
// blocks, and follows when the caller's own scope proposed some).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { withoutSilencedAuthors } from '../moderation/limited.ts';
import { visibleWith, type ViewerRelations } from '../statuses/visibility.ts';
import { blockersAmong, followedAmong } from '../graph/relations.ts';
import { parseStatusQuery, type ParsedQuery } from './queryParser.ts';
import { foldText, pseudoTerm, searchableText, statusTerms } from './tokenize.ts';
import { idScore, PostingCursor, postingKey } from './statusIndex.ts';

export interface StatusSearch {
  q: string;
  limit: number;
  offset: number;
  /** Only statuses by this account. */
  accountId?: Id;
  maxId?: Id;
  minId?: Id;
}

/** What one search did (the benchmark lists it for its slowest queries). */
export interface SearchStats {
  /** Postings the index walk read. */
  postings: number;
  /** Candidates read back from MongoDB. */
  candidates: number;
  /** Read-back rounds. */
  rounds: number;
}

/** Resolves `from:` values (`me`, `user`, `user@domain`) to account ids; null when one is unknown. */
async function resolveFrom(core: Core, viewer: CachedAccount, values: string[]): Promise<Id[] | null> {
  const ids: Id[] = [];
  for (const v of values) {
    if (v === 'me') {
      ids.push(viewer._id);
      continue;
    }
    const [username, domain] = v.split('@', 2) as [string, string | undefined];
    const local = domain === undefined || domain === core.config.localDomain.toLowerCase();
    const found = await collection(core.db, accounts).findOne(
      { usernameLower: username, domain: local ? null : domain },
      { projection: { _id: 1 } },
    );
    if (!found) return null;
    ids.push(found._id);
  }
  return ids;
}

/** Whether a status read back from MongoDB still matches the query (the index may be stale). */
function matches(status: StatusDoc, q: ParsedQuery, terms: string[], minMs: number, maxMs: number): boolean {
  if (status.deletedAt || status.reblogOfId !== null) return false;
  const ms = idScore(status._id);
  if (ms < minMs || ms > maxMs) return false;
  const has = new Set(statusTerms(status));
  if (!terms.every((t) => has.has(t))) return false;
  if (q.excluded.some((t) => has.has(t))) return false;
  if (q.phrases.length > 0) {
    const text = foldText(searchableText(status)).replace(/\s+/g, ' ');
    if (!q.phrases.every((p) => text.includes(p))) return false;
  }
  return true;
}

/** A candidate id and whether the caller's own scope proposed it. */
interface Candidate {
  id: Id;
  own: boolean;
}

/** The newest-first merge of the caller's own scope and the public scope (an id in both comes out once). */
async function* mergeNewestFirst(
  personal: PostingCursor | null,
  everyone: PostingCursor | null,
  batch: number,
): AsyncGenerator<Candidate> {
  // A post indexed while the walk runs can shift ranks by one: never yield an id twice.
  const seen = new Set<Id>();
  for (;;) {
    const p = personal ? await personal.peek(batch) : null;
    const e = everyone ? await everyone.peek(batch) : null;
    const id = p !== null && (e === null || p >= e) ? p : e;
    if (id === null) return;
    if (p === id) personal?.take();
    if (e === id) everyone?.take();
    if (!seen.has(id)) yield { id, own: p === id };
    seen.add(id);
  }
}

export async function searchStatuses(
  core: Core,
  viewer: CachedAccount,
  s: StatusSearch,
  stats?: SearchStats,
): Promise<StatusDoc[]> {
  const q = parseStatusQuery(s.q);
  const from = await resolveFrom(core, viewer, q.from);
  if (from === null) return [];
  if (s.accountId !== undefined) from.push(s.accountId);
  const terms = [...q.terms, ...from.map((id) => pseudoTerm.from(id))];
  if (q.terms.length === 0 && from.length === 0) return [];

  let maxMs = Number.MAX_SAFE_INTEGER;
  let minMs = 0;
  if (q.before !== null) maxMs = Math.min(maxMs, q.before - 1);
  if (q.after !== null) minMs = Math.max(minMs, q.after);
  if (s.maxId !== undefined) maxMs = Math.min(maxMs, idScore(s.maxId));
  if (s.minId !== undefined) minMs = Math.max(minMs, idScore(s.minId));
  if (minMs > maxMs) return [];

  const want = s.offset + s.limit;
  // Nearly every candidate passes the checks: a quarter more than the page, so one round usually does.
  const batch = Math.min(Math.ceil(want * 1.25) + 5, 400);
  const walk = (scope: 'public' | Id) => ({
    include: terms.map((t) => postingKey(scope, t)),
    exclude: q.excluded.map((t) => postingKey(scope, t)),
    maxScore: maxMs,
    minScore: minMs,
  });
  const [personal, everyone] = await Promise.all([
    PostingCursor.open(core.redis, walk(viewer._id), undefined, batch),
    q.libraryOnly ? null : PostingCursor.open(core.redis, walk('public'), undefined, batch),
  ]);
  if (personal === null && everyone === null) return [];

  const found: StatusDoc[] = [];
  const ids = mergeNewestFirst(personal, everyone, batch);
  let exhausted = false;
  while (found.length < want && !exhausted) {
    const chunk: Candidate[] = [];
    while (chunk.length < batch) {
      const next = await ids.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const { id } = next.value;
      if (s.maxId !== undefined && id >= s.maxId) continue;
      if (s.minId !== undefined && id <= s.minId) continue;
      chunk.push(next.value);
    }
    if (chunk.length === 0) break;
    if (stats) {
      stats.candidates += chunk.length;
      stats.rounds += 1;
    }
    // Whole documents: the caller renders the page from them (presentStatusPage's `docs`).
    const docs = await collection(core.db, statuses)
      .find({ _id: { $in: chunk.map((c) => c.id) } })
      .toArray();
    const byId = new Map(docs.map((d) => [d._id, d]));
    const candidates: { doc: StatusDoc; own: boolean }[] = [];
    for (const c of chunk) {
      const doc = byId.get(c.id);
      if (doc && matches(doc, q, terms, minMs, maxMs)) candidates.push({ doc, own: c.own });
    }
    found.push(...(await permitted(core, viewer, candidates)));
  }
  if (stats) stats.postings = (personal?.postingsRead ?? 0) + (everyone?.postingsRead ?? 0);
  return found.slice(s.offset, want);
}

/**
 * The candidates the caller may find: proposed by the caller's own scope (author, mentioned,
 * interacted) and visible under the status policy, or public by an available, indexable author
 * who does not block the caller; silenced authors only for their followers. One round of parallel
 * queries (a second only when a silenced author shows up whom the first did not cover).
 */
async function permitted(
  core: Core,
  viewer: CachedAccount,
  candidates: { doc: StatusDoc; own: boolean }[],
): Promise<StatusDoc[]> {
  if (candidates.length === 0) return [];
  const authorIds = [...new Set(candidates.map((c) => c.doc.accountId))];
  const others = authorIds.filter((id) => id !== viewer._id);
  // Follows matter for the caller's own scope (private posts of followed authors) only.
  const ownAuthors = [...new Set(candidates.filter((c) => c.own).map((c) => c.doc.accountId))].filter(
    (id) => id !== viewer._id,
  );
  const [authors, blockers, following] = await Promise.all([
    collection(core.db, accounts)
      .find({ _id: { $in: authorIds } }, { projection: { _id: 1, indexable: 1, suspendedAt: 1, silencedAt: 1 } })
      .toArray(),
    blockersAmong(core, others, viewer._id),
    followedAmong(core, viewer._id, ownAuthors),
  ]);
  const available = new Set(authors.filter((a) => !a.suspendedAt).map((a) => a._id));
  const rel: ViewerRelations = {
    viewerId: viewer._id,
    following,
    blockedBy: blockers,
    blocking: new Set(),
    unavailable: new Set(authorIds.filter((id) => !available.has(id))),
  };
  const openAuthors = new Set(authors.filter((a) => a.indexable && !a.suspendedAt).map((a) => a._id));
  const found = candidates
    .filter(({ doc, own }) =>
      own
        ? visibleWith(rel, doc)
        : doc.visibility === 'public' && openAuthors.has(doc.accountId) && !blockers.has(doc.accountId),
    )
    .map((c) => c.doc);
  const silenced = new Set(authors.filter((a) => a.silencedAt).map((a) => a._id));
  return withoutSilencedAuthors(core, viewer, found, silenced, following);
}
