// The status search index: an inverted index in Redis, one sorted set of status ids per term and
// scope (member = the id in decimal, score = its millisecond part, so newest-first walks and
// before/after bounds are range reads). Two scopes, as Mastodon's two Elasticsearch indices:
//   search:p:<term>               public statuses of accounts that opted into `indexable`;
//   search:u:<accountId>:<term>   what one local account may always search: its own statuses and
//                                 those it was mentioned in, favourited, boosted or bookmarked.
// MongoDB stays the source of truth: the index only proposes candidates, every result is read back
// and checked (still there, still holding the terms, visible to the caller), so a stale posting
// (an edit removed a word, a deleted status) can never leak. `rebuildStatusIndex` (indexer.ts) refills it.
import type { Id } from '../ids.ts';
import type { Redis } from '../db/redis.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { statusTerms } from './tokenize.ts';

const PUBLIC = 'search:p:';
const personalPrefix = (accountId: Id | string) => `search:u:${accountId}:`;

export const idScore = (id: Id): number => Number(id >> 16n);

/** The key of one posting list. */
export function postingKey(scope: 'public' | Id, term: string): string {
  return scope === 'public' ? PUBLIC + term : personalPrefix(scope) + term;
}

/** Whether a status goes into the public scope: a public post (not a boost) by an indexable account. */
export function publiclySearchable(status: StatusDoc, author: { indexable: boolean }): boolean {
  return status.visibility === 'public' && status.reblogOfId === null && author.indexable;
}

/** Adds a status's terms to the public scope (when `isPublic`) and to the given accounts' scopes. */
export async function indexStatus(
  redis: Redis,
  status: StatusDoc,
  scopes: { isPublic: boolean; accounts: readonly Id[] },
  terms: readonly string[] = statusTerms(status),
): Promise<void> {
  const member = String(status._id);
  const score = idScore(status._id);
  const pipe = redis.pipeline();
  for (const term of terms) {
    if (scopes.isPublic) pipe.zadd(PUBLIC + term, score, member);
    for (const a of scopes.accounts) pipe.zadd(personalPrefix(a) + term, score, member);
  }
  await pipe.exec();
}

/** Removes a status's (current) terms from the given accounts' scopes and (by default) the public scope. */
export async function unindexStatus(
  redis: Redis,
  status: StatusDoc,
  accounts: readonly Id[],
  opts: { publicScope?: boolean } = {},
): Promise<void> {
  const member = String(status._id);
  const pipe = redis.pipeline();
  for (const term of statusTerms(status)) {
    if (opts.publicScope !== false) pipe.zrem(PUBLIC + term, member);
    for (const a of accounts) pipe.zrem(personalPrefix(a) + term, member);
  }
  await pipe.exec();
}

/** One posting list walk: intersection of `include` minus `exclude`, newest first, within score bounds. */
export interface PostingWalk {
  include: string[];
  exclude: string[];
  /** Score bounds (inclusive). */
  maxScore: number;
  minScore: number;
}

// Walks the first (smallest) list newest-first by rank (O(log n) per page, however deep the walk)
// and keeps the ids every other included list holds and no excluded list holds. ARGV[4] is the
// rank to continue from, or -1 to start at the first member not above the max score. Bounded per
// call (`scanLimit`) so one script never blocks Redis for long; returns the rank to continue from
// (-1 when the walk is finished), the ids found and how many postings it read.
const WALK_SCRIPT = `
local nInc = tonumber(ARGV[1])
local minScore = tonumber(ARGV[3])
local rank = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
local scanLimit = tonumber(ARGV[6])
if rank < 0 then rank = redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[2], '+inf') end
local out = {}
local scanned = 0
while scanned < scanLimit do
  local page = redis.call('ZREVRANGE', KEYS[1], rank, rank + 255, 'WITHSCORES')
  for i = 1, #page, 2 do
    if tonumber(page[i + 1]) < minScore then return {-1, out, scanned} end
    local m = page[i]
    local ok = true
    for k = 2, nInc do
      if not redis.call('ZSCORE', KEYS[k], m) then ok = false break end
    end
    if ok then
      for k = nInc + 1, #KEYS do
        if redis.call('ZSCORE', KEYS[k], m) then ok = false break end
      end
    end
    if ok then
      out[#out + 1] = m
      if #out >= want then return {rank + (i + 1) / 2, out, scanned + (i + 1) / 2} end
    end
  end
  local n = #page / 2
  rank = rank + n
  scanned = scanned + n
  if n < 256 then return {-1, out, scanned} end
end
return {rank, out, scanned}
`;

type WalkRedis = Redis & {
  searchWalk(numKeys: number, ...args: (string | number)[]): Promise<[number, string[], number]>;
};

function walker(redis: Redis): WalkRedis {
  const r = redis as WalkRedis;
  if (typeof r.searchWalk !== 'function') redis.defineCommand('searchWalk', { lua: WALK_SCRIPT });
  return r;
}

/** A resumable newest-first walk over one scope's intersection. */
export class PostingCursor {
  /** Rank to continue from (-1: not started). */
  private rank = -1;
  private buffer: Id[] = [];
  private done = false;
  private scanned = 0;
  private readonly redis: WalkRedis;
  private readonly keys: string[];
  private readonly nInclude: number;
  private readonly walk: PostingWalk;
  private readonly scanBudget: number;

  private constructor(redis: Redis, keys: string[], nInclude: number, walk: PostingWalk, scanBudget: number) {
    this.redis = walker(redis);
    this.keys = keys;
    this.nInclude = nInclude;
    this.walk = walk;
    this.scanBudget = scanBudget;
  }

  /**
   * Opens a walk; the smallest included list drives it. Resolves to null when an included list is
   * empty (nothing can match). `scanBudget` caps the postings read per search.
   */
  static async open(redis: Redis, walk: PostingWalk, scanBudget = 400_000): Promise<PostingCursor | null> {
    if (walk.include.length === 0) return null;
    const pipe = redis.pipeline();
    for (const k of walk.include) pipe.zcard(k);
    const sizes = ((await pipe.exec()) ?? []).map(([, n]) => Number(n));
    if (sizes.some((n) => n === 0)) return null;
    const order = walk.include.map((k, i) => ({ k, n: sizes[i] as number })).sort((a, b) => a.n - b.n);
    const keys = [...order.map((o) => o.k), ...walk.exclude];
    return new PostingCursor(redis, keys, walk.include.length, walk, scanBudget);
  }

  /** The next id (newest first) without consuming it, or null at the end. */
  async peek(batch: number): Promise<Id | null> {
    while (this.buffer.length === 0 && !this.done) await this.fill(batch);
    return this.buffer[0] ?? null;
  }

  /** Postings read so far. */
  get postingsRead(): number {
    return this.scanned;
  }

  take(): Id | undefined {
    return this.buffer.shift();
  }

  private async fill(batch: number): Promise<void> {
    const step = 20_000;
    const [next, ids, read] = await this.redis.searchWalk(
      this.keys.length,
      ...this.keys,
      this.nInclude,
      this.walk.maxScore,
      this.walk.minScore,
      this.rank,
      batch,
      step,
    );
    this.scanned += read;
    // Ties in score come back in reverse member order; order exactly by id.
    this.buffer = ids.map((s) => BigInt(s)).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    if (next < 0 || this.scanned >= this.scanBudget) this.done = true;
    else this.rank = next;
  }
}
