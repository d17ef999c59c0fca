// The status search index: an inverted index in Redis, one sorted set of status ids per term and
// scope (member = the id in decimal, score = its millisecond part, so newest-first walks and
// before/after bounds are range reads). Two scopes, as Mastodon's two Elasticsearch indices:
//   search:{p}:<term>             public statuses of accounts that opted into `indexable`;
//   search:{u<accountId>}:<term>  what one local account may always search: its own statuses and
//                                 those it was mentioned in, favourited, boosted or bookmarked.
// The braces are a Redis Cluster hash tag: a scope's lists share one slot, so a search's
// intersection stays one script per page (the public scope lives on one primary; each account's
// scope on the primary of its slot). Before the tags: `search:p:<term>`, `search:u:<id>:<term>`
// (see db/keyMigration.ts).
// MongoDB stays the source of truth: the index only proposes candidates, every result is read back
// and checked (still there, still holding the terms, visible to the caller), so a stale posting
// (an edit removed a word, a deleted status) can never leak. `rebuildStatusIndex` (indexer.ts) refills it.
import type { Id } from '../ids.ts';
import { batch, type Redis } from '../db/redis.ts';
import { runScript } from '../db/redisSlots.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { statusTerms } from './tokenize.ts';

const PUBLIC = 'search:{p}:';
const personalPrefix = (accountId: Id | string) => `search:{u${accountId}}:`;

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
  const pipe = batch(redis);
  indexStatusInto(pipe, status, scopes, terms);
  await pipe.exec();
}

/** indexStatus's commands, added to a pipeline the caller sends (with other statuses'). */
export function indexStatusInto(
  pipe: ReturnType<typeof batch>,
  status: StatusDoc,
  scopes: { isPublic: boolean; accounts: readonly Id[] },
  terms: readonly string[] = statusTerms(status),
): void {
  const member = String(status._id);
  const score = idScore(status._id);
  for (const term of terms) {
    if (scopes.isPublic) pipe.zadd(PUBLIC + term, score, member);
    for (const a of scopes.accounts) pipe.zadd(personalPrefix(a) + term, score, member);
  }
}

/** Removes a status's (current) terms from the given accounts' scopes and (by default) the public scope. */
export async function unindexStatus(
  redis: Redis,
  status: StatusDoc,
  accounts: readonly Id[],
  opts: { publicScope?: boolean } = {},
): Promise<void> {
  const member = String(status._id);
  const pipe = batch(redis);
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

// Walks the smallest included list newest-first by rank (O(log n) per page, however deep the
// walk), a page of 256 at a time, and keeps the ids every other included list holds and no
// excluded list holds (one ZMSCORE per other list and page: with a ZSCORE per posting and the
// pages read with their scores, the walk cost three times as much). KEYS: the
// included lists, then the excluded ones. ARGV[4] is the rank to continue from, or -1 to start at
// the first member not above the max score; ARGV[7] the index in KEYS of the list that drives the
// walk, or 0 on the first call, which picks the smallest (ZCARD) and answers driver 0 when an
// included list is empty (nothing can match), so opening a walk costs no extra round trip.
// Bounded per call (`scanLimit`) so one script never blocks Redis for long; returns the rank to
// continue from (-1 when the walk is finished), the ids found, how many postings it read and the
// driver.
const WALK_SCRIPT = `
local nInc = tonumber(ARGV[1])
local minScore = tonumber(ARGV[3])
local rank = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
local scanLimit = tonumber(ARGV[6])
local driver = tonumber(ARGV[7])
if driver < 1 then
  local smallest = -1
  for k = 1, nInc do
    local n = redis.call('ZCARD', KEYS[k])
    if n == 0 then return {-1, {}, 0, 0} end
    if smallest < 0 or n < smallest then
      smallest = n
      driver = k
    end
  end
end
local others = {}
for k = 1, #KEYS do
  if k ~= driver then others[#others + 1] = k end
end
local nOthers = nInc - 1
local lead = KEYS[driver]
if rank < 0 then rank = redis.call('ZCOUNT', lead, '(' .. ARGV[2], '+inf') end
-- Ranks (newest first) 0..stop hold the members not below the min score: pages are read by rank
-- without their scores, which would cost more to send to the script than all the rest.
local stop = redis.call('ZCOUNT', lead, ARGV[3], '+inf') - 1
local out = {}
local scanned = 0
while scanned < scanLimit and rank <= stop do
  local upto = math.min(rank + 255, stop)
  local members = redis.call('ZREVRANGE', lead, rank, upto)
  local n = #members
  local keep = {}
  for i = 1, n do keep[i] = true end
  -- One ZMSCORE per other list and page: the included lists must hold a member, the excluded not.
  if n > 0 then
    for j = 1, #others do
      local scores = redis.call('ZMSCORE', KEYS[others[j]], unpack(members))
      local included = j <= nOthers
      for i = 1, n do
        if keep[i] and (scores[i] ~= false) ~= included then keep[i] = false end
      end
    end
  end
  for i = 1, n do
    if keep[i] then
      out[#out + 1] = members[i]
      if #out >= want then return {rank + i, out, scanned + i, driver} end
    end
  end
  scanned = scanned + n
  -- A shorter page than asked: the list shrank under the walk; it is over.
  if n < upto - rank + 1 then return {-1, out, scanned, driver} end
  rank = rank + n
end
if rank > stop then return {-1, out, scanned, driver} end
return {rank, out, scanned, driver}
`;

interface WalkRedis {
  searchWalk(numKeys: number, ...args: (string | number)[]): Promise<[number, string[], number, number]>;
}

/**
 * The walk through EVAL, not defineCommand: a search may be the first to need it at any time, and
 * defining a command while an auto-pipeline is open can crash ioredis (redis/ioredis#1931; off in
 * connectRedis now, but this stays safe if it is turned on again).
 */
function walker(redis: Redis): WalkRedis {
  return {
    searchWalk: (numKeys, ...args) =>
      runScript(redis, WALK_SCRIPT, args.slice(0, numKeys) as string[], args.slice(numKeys)) as Promise<
        [number, string[], number, number]
      >,
  };
}

/** A resumable newest-first walk over one scope's intersection. */
export class PostingCursor {
  /** Rank to continue from. */
  private rank = -1;
  /** Index (1-based, in `keys`) of the list that drives the walk; 0 until the first call chose it. */
  private driver = 0;
  private buffer: Id[] = [];
  private done = false;
  private scanned = 0;
  private readonly redis: WalkRedis;
  private readonly keys: string[];
  private readonly nInclude: number;
  private readonly walk: PostingWalk;
  private readonly scanBudget: number;

  private constructor(redis: Redis, walk: PostingWalk, scanBudget: number) {
    this.redis = walker(redis);
    this.keys = [...walk.include, ...walk.exclude];
    this.nInclude = walk.include.length;
    this.walk = walk;
    this.scanBudget = scanBudget;
  }

  /**
   * Opens a walk and reads its first `batch` ids (one round trip); the smallest included list
   * drives it. Resolves to null when an included list is empty (nothing can match). `scanBudget`
   * caps the postings read per search.
   */
  static async open(redis: Redis, walk: PostingWalk, scanBudget = 400_000, batch = 40): Promise<PostingCursor | null> {
    if (walk.include.length === 0) return null;
    const cursor = new PostingCursor(redis, walk, scanBudget);
    await cursor.fill(batch);
    return cursor.driver === 0 ? null : cursor;
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
    const [next, ids, read, driver] = await this.redis.searchWalk(
      this.keys.length,
      ...this.keys,
      this.nInclude,
      this.walk.maxScore,
      this.walk.minScore,
      this.rank,
      batch,
      step,
      this.driver,
    );
    this.driver = driver;
    this.scanned += read;
    // Ties in score come back in reverse member order; order exactly by id.
    this.buffer = ids.map((s) => BigInt(s)).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    if (next < 0 || this.scanned >= this.scanBudget) this.done = true;
    else this.rank = next;
  }
}
