// Full-text status search over what the caller may see, newest first: the index proposes ids
// (statusIndex.ts: the caller's own scope merged with the public scope), each candidate is read
// back from MongoDB and checked against the query and the visibility policy.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { withoutLimitedAuthors } from '../moderation/limited.ts';
import { filterVisible } from '../statuses/visibility.ts';
import { blockersAmong } from '../graph/relations.ts';
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
async function resolveFrom(core: Core, viewer: AccountDoc, values: string[]): Promise<Id[] | null> {
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

/** A newest-first merge of several cursors (ids from more than one come out once). */
async function* mergeNewestFirst(cursors: PostingCursor[], batch: number): AsyncGenerator<Id> {
  // A post indexed while the walk runs can shift ranks by one: never yield an id twice.
  const seen = new Set<Id>();
  for (;;) {
    let best: PostingCursor | null = null;
    let bestId: Id | null = null;
    for (const c of cursors) {
      const id = await c.peek(batch);
      if (id !== null && (bestId === null || id > bestId)) {
        best = c;
        bestId = id;
      }
    }
    if (best === null || bestId === null) return;
    best.take();
    if (!seen.has(bestId)) yield bestId;
    seen.add(bestId);
  }
}

export async function searchStatuses(
  core: Core,
  viewer: AccountDoc,
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

  const walk = (scope: 'public' | Id) => ({
    include: terms.map((t) => postingKey(scope, t)),
    exclude: q.excluded.map((t) => postingKey(scope, t)),
    maxScore: maxMs,
    minScore: minMs,
  });
  const [personal, everyone] = await Promise.all([
    PostingCursor.open(core.redis, walk(viewer._id)),
    q.libraryOnly ? null : PostingCursor.open(core.redis, walk('public')),
  ]);
  const cursors = [personal, everyone].filter((c): c is PostingCursor => c !== null);
  if (cursors.length === 0) return [];

  const want = s.offset + s.limit;
  const batch = Math.min(Math.max(want * 2, 40), 400);
  const found: StatusDoc[] = [];
  const ids = mergeNewestFirst(cursors, batch);
  let exhausted = false;
  while (found.length < want && !exhausted) {
    const chunk: Id[] = [];
    while (chunk.length < batch) {
      const next = await ids.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const id = next.value;
      if (s.maxId !== undefined && id >= s.maxId) continue;
      if (s.minId !== undefined && id <= s.minId) continue;
      chunk.push(id);
    }
    if (chunk.length === 0) break;
    if (stats) {
      stats.candidates += chunk.length;
      stats.rounds += 1;
    }
    const docs = await collection(core.db, statuses)
      .find({ _id: { $in: chunk } })
      .toArray();
    const byId = new Map(docs.map((d) => [d._id, d]));
    const candidates = chunk
      .map((id) => byId.get(id))
      .filter((d): d is StatusDoc => d !== undefined && matches(d, q, terms, minMs, maxMs));
    found.push(...(await permitted(core, viewer, candidates)));
  }
  if (stats) stats.postings = cursors.reduce((n, c) => n + c.postingsRead, 0);
  return found.slice(s.offset, want);
}

/**
 * The candidates the caller may find: in the caller's own scope (author, mentioned, interacted)
 * and visible under the status policy, or public by an available, indexable author who does not
 * block the caller. Public candidates, nearly all of them, cost one round of parallel queries.
 */
async function permitted(core: Core, viewer: AccountDoc, candidates: StatusDoc[]): Promise<StatusDoc[]> {
  if (candidates.length === 0) return [];
  const authorIds = [...new Set(candidates.map((st) => st.accountId))];
  const pipe = core.redis.pipeline();
  // A candidate of the caller's own scope is in the personal posting list of its author id term.
  for (const st of candidates) pipe.zscore(postingKey(viewer._id, pseudoTerm.from(st.accountId)), String(st._id));
  const others = authorIds.filter((id) => id !== viewer._id);
  const [scores, authors, blockers] = await Promise.all([
    pipe.exec(),
    collection(core.db, accounts)
      .find({ _id: { $in: authorIds } }, { projection: { _id: 1, indexable: 1, suspendedAt: 1 } })
      .toArray(),
    others.length > 0 ? blockersAmong(core, others, viewer._id) : Promise.resolve(new Set<bigint>()),
  ]);
  const own = (scores ?? []).map(([, v]) => v !== null);
  const openAuthors = new Set(authors.filter((a) => a.indexable && !a.suspendedAt).map((a) => a._id));
  const ownCandidates = candidates.filter((_, i) => own[i]);
  const ownVisible = new Set((await filterVisible(core, viewer, ownCandidates)).map((st) => st._id));
  const found = candidates.filter(
    (st, i) =>
      (own[i] && ownVisible.has(st._id)) ||
      (!own[i] && st.visibility === 'public' && openAuthors.has(st.accountId) && !blockers.has(st.accountId)),
  );
  // Silenced authors are found only by their followers.
  return withoutLimitedAuthors(core, viewer, found);
}
