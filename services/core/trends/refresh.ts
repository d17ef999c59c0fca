// The periodic trend refresh (Mastodon's Trends.refresh!): scores every recently used item, keeps
// the best score per hashtag/link, writes each kind's ranking (items above the decay threshold,
// swapped in atomically) and each item's main language, and queues items above the review
// threshold for review.
import type { Core } from '../context.ts';
import { batch as redisBatch } from '../db/redis.ts';
import { TREND_KINDS, type TrendKind } from '../model/trends.ts';
import { trendKeys } from './counters.ts';
import {
  dayNumber,
  historyTrendScore,
  LINK_TREND_OPTIONS,
  reviewThreshold,
  STATUS_TREND_OPTIONS,
  statusTrendScore,
  TAG_TREND_OPTIONS,
  type MaxScore,
} from './scoring.ts';
import { requestReviews, sendReviewNotices } from './review.ts';

const BATCH = 500;

function decodeMax(raw: string | null | undefined): MaxScore | null {
  if (!raw) return null;
  const [score, at] = raw.split('|').map(Number);
  return Number.isFinite(score) && Number.isFinite(at) ? { score: score as number, atMs: at as number } : null;
}

function mainLanguage(counts: Record<string, string>): string {
  let best = '';
  let n = -1;
  for (const [lang, c] of Object.entries(counts))
    if (Number(c) > n) {
      best = lang;
      n = Number(c);
    }
  return best;
}

/** Scores one kind; returns the ranked items (score ≥ decay threshold). */
async function scoreKind(core: Core, kind: TrendKind, atMs: number): Promise<Map<string, number>> {
  const redis = core.redis;
  const horizon = kind === 'status' ? STATUS_TREND_OPTIONS.maxAgeMs : 2 * 86_400_000;
  await redis.zremrangebyscore(trendKeys.recent(kind), '-inf', String(atMs - horizon));
  const items = await redis.zrange(trendKeys.recent(kind), '0', '-1');
  const today = dayNumber(atMs);
  const ranked = new Map<string, number>();
  for (let i = 0; i < items.length; i += BATCH) {
    const batch = items.slice(i, i + BATCH);
    const pipe = redisBatch(redis);
    for (const item of batch) {
      if (kind === 'status')
        pipe.pfcount(trendKeys.accounts(kind, item, today), trendKeys.accounts(kind, item, today - 1));
      else {
        pipe.pfcount(trendKeys.accounts(kind, item, today));
        pipe.pfcount(trendKeys.accounts(kind, item, today - 1));
      }
    }
    pipe.hmget(trendKeys.maxScore(kind), ...batch);
    const res = (await pipe.exec()) ?? [];
    const maxima = (res[res.length - 1]?.[1] ?? []) as (string | null)[];
    const updates: Record<string, string> = {};
    batch.forEach((item, j) => {
      let decayed: number;
      if (kind === 'status') {
        const observed = Number(res[j]?.[1] ?? 0);
        const createdAtMs = Number(BigInt(item) >> 16n);
        decayed = statusTrendScore(observed, createdAtMs, atMs, STATUS_TREND_OPTIONS);
        if (decayed >= STATUS_TREND_OPTIONS.decayThreshold) ranked.set(item, decayed);
        return;
      }
      const opts = kind === 'tag' ? TAG_TREND_OPTIONS : LINK_TREND_OPTIONS;
      const observed = Number(res[2 * j]?.[1] ?? 0);
      const expected = Number(res[2 * j + 1]?.[1] ?? 0);
      const previous = decodeMax(maxima[j]);
      const { max, decayed: d } = historyTrendScore(observed, expected, previous, atMs, opts);
      decayed = d;
      if (max && (max.score !== previous?.score || max.atMs !== previous?.atMs))
        updates[item] = `${max.score}|${max.atMs}`;
      if (decayed >= opts.decayThreshold) ranked.set(item, decayed);
    });
    if (Object.keys(updates).length > 0) await redis.hset(trendKeys.maxScore(kind), updates);
  }
  return ranked;
}

export interface RefreshResult {
  ranked: Record<TrendKind, number>;
  noticesSent: number;
}

export async function refreshTrends(core: Core, atMs = Date.now()): Promise<RefreshResult> {
  const ranked = { tag: 0, status: 0, link: 0 } as Record<TrendKind, number>;
  for (const kind of TREND_KINDS) {
    const scores = await scoreKind(core, kind, atMs);
    ranked[kind] = scores.size;
    const items = [...scores.keys()];
    const pipe = redisBatch(core.redis);
    for (const item of items) pipe.hgetall(trendKeys.language(kind, item));
    const langs = ((await pipe.exec()) ?? []).map(([, v]) => mainLanguage((v ?? {}) as Record<string, string>));
    const tmp = `${trendKeys.ranking(kind)}:next`;
    const write = core.redis.multi();
    write.del(tmp);
    if (items.length > 0) write.zadd(tmp, ...items.flatMap((item) => [scores.get(item) as number, item]));
    write.del(trendKeys.itemLanguage(kind));
    const withLang = items.flatMap((item, i) => (langs[i] ? [item, langs[i] as string] : []));
    if (withLang.length > 0) write.hset(trendKeys.itemLanguage(kind), ...withLang);
    if (items.length > 0) write.rename(tmp, trendKeys.ranking(kind));
    else write.del(trendKeys.ranking(kind));
    await write.exec();
    const threshold = reviewThreshold(kind);
    await requestReviews(
      core,
      kind,
      items.filter((item) => (scores.get(item) as number) > threshold),
      new Date(atMs),
    );
  }
  const noticesSent = await sendReviewNotices(core, new Date(atMs));
  return { ranked, noticesSent };
}
