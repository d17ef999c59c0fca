// The raw trend counters in Redis, per item and UTC day (kept 8 days):
//   trends:acc:<kind>:<item>:<day>   HyperLogLog of the accounts that used the item that day;
//   trends:uses:<kind>:<item>:<day>  HyperLogLog of the statuses that used it (a hashtag's "uses");
//   trends:lang:<kind>:<item>        hash language → uses, for the item's language;
//   trends:recent:<kind>             sorted set item → last use (ms), what the refresh looks at.
// The counts are HyperLogLogs and maxima, so a redelivered event changes none of them.
import { batch, type Redis } from '../db/redis.ts';
import type { TrendKind } from '../model/trends.ts';
import { DAY_MS, dayNumber } from './scoring.ts';

const KEEP_SECONDS = 8 * 86_400;

// Redis Cluster hash tags: an item's counters share a slot (PFCOUNT over two days), and so do a
// kind's ranking, its next ranking and its languages (replaced together in one MULTI).
export const trendKeys = {
  accounts: (kind: TrendKind, item: string, day: number) => `trends:acc:{${kind}:${item}}:${day}`,
  uses: (kind: TrendKind, item: string, day: number) => `trends:uses:{${kind}:${item}}:${day}`,
  language: (kind: TrendKind, item: string) => `trends:lang:{${kind}:${item}}`,
  recent: (kind: TrendKind) => `trends:recent:{${kind}}`,
  maxScore: (kind: TrendKind) => `trends:max:{${kind}}`,
  ranking: (kind: TrendKind) => `trends:rank:{${kind}}`,
  itemLanguage: (kind: TrendKind) => `trends:itemlang:{${kind}}`,
};

export interface TrendUse {
  kind: TrendKind;
  /** Normalised tag name, status id or preview card id. */
  item: string;
  accountId: string;
  /** The status that used it (counts a hashtag's uses). */
  statusId: string;
  atMs: number;
  language: string | null;
}

/** Queues the writes of one use on a pipeline (the caller executes it, batching many uses). */
export function recordUse(pipe: ReturnType<Redis['pipeline']>, use: TrendUse): void {
  const day = dayNumber(use.atMs);
  const acc = trendKeys.accounts(use.kind, use.item, day);
  const uses = trendKeys.uses(use.kind, use.item, day);
  pipe.pfadd(acc, use.accountId);
  pipe.expire(acc, KEEP_SECONDS);
  pipe.pfadd(uses, use.statusId);
  pipe.expire(uses, KEEP_SECONDS);
  if (use.language) {
    const lang = trendKeys.language(use.kind, use.item);
    // Approximate under redelivery, which only matters for choosing the item's main language.
    pipe.hincrby(lang, use.language, 1);
    pipe.expire(lang, KEEP_SECONDS);
  }
  pipe.zadd(trendKeys.recent(use.kind), 'GT', use.atMs, use.item);
}

export interface DayCount {
  /** Start of the UTC day, ms. */
  dayMs: number;
  uses: number;
  accounts: number;
}

/** Uses and unique accounts per day for the last `days` days (newest first), for items of one kind. */
export async function histories(
  redis: Redis,
  kind: TrendKind,
  items: readonly string[],
  atMs = Date.now(),
  days = 7,
): Promise<Map<string, DayCount[]>> {
  const out = new Map<string, DayCount[]>();
  if (items.length === 0) return out;
  const today = dayNumber(atMs);
  const pipe = batch(redis);
  for (const item of items)
    for (let d = 0; d < days; d++) {
      pipe.pfcount(trendKeys.uses(kind, item, today - d));
      pipe.pfcount(trendKeys.accounts(kind, item, today - d));
    }
  const results = ((await pipe.exec()) ?? []).map(([, v]) => Number(v ?? 0));
  let i = 0;
  for (const item of items) {
    const list: DayCount[] = [];
    for (let d = 0; d < days; d++) {
      list.push({ dayMs: (today - d) * DAY_MS, uses: results[i] ?? 0, accounts: results[i + 1] ?? 0 });
      i += 2;
    }
    out.set(item, list);
  }
  return out;
}
