// Mastodon's trend scores (app/models/trends/{tags,links,statuses}.rb), as pure functions.
// Hashtags and links: how far today's unique accounts exceed yesterday's, (observed - expected)² /
// expected, zero below a threshold; the best score of the last two days decays with a half-life.
// Statuses: unique interacting accounts against an expectation of one, decayed by the status's age.
import type { TrendKind } from '../model/trends.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface HistoryTrendOptions {
  /** Unique accounts today below which the score is 0. */
  threshold: number;
  /** Decayed score above which an unreviewed item asks for review. */
  reviewThreshold: number;
  maxScoreCooldownMs: number;
  maxScoreHalflifeMs: number;
  /** Decayed score below which an item leaves the ranking. */
  decayThreshold: number;
}

export interface StatusTrendOptions {
  threshold: number;
  reviewThreshold: number;
  scoreHalflifeMs: number;
  decayThreshold: number;
  /** Only statuses younger than this are considered. */
  maxAgeMs: number;
}

export const TAG_TREND_OPTIONS: HistoryTrendOptions = {
  threshold: 5,
  reviewThreshold: 3,
  maxScoreCooldownMs: 2 * DAY,
  maxScoreHalflifeMs: 4 * HOUR,
  decayThreshold: 1,
};

/** Links: the specification's 15 unique accounts (Mastodon's default is 5). */
export const LINK_TREND_OPTIONS: HistoryTrendOptions = {
  threshold: 15,
  reviewThreshold: 3,
  maxScoreCooldownMs: 2 * DAY,
  maxScoreHalflifeMs: 8 * HOUR,
  decayThreshold: 1,
};

export const STATUS_TREND_OPTIONS: StatusTrendOptions = {
  threshold: 5,
  reviewThreshold: 3,
  scoreHalflifeMs: 1 * HOUR,
  decayThreshold: 0.3,
  maxAgeMs: 1 * DAY,
};

export function reviewThreshold(kind: TrendKind): number {
  return kind === 'tag'
    ? TAG_TREND_OPTIONS.reviewThreshold
    : kind === 'link'
      ? LINK_TREND_OPTIONS.reviewThreshold
      : STATUS_TREND_OPTIONS.reviewThreshold;
}

/** (observed - expected)² / expected, or 0 when below the threshold or not above expectation. */
export function rawScore(observed: number, expected: number, threshold: number): number {
  const e = expected > 0 ? expected : 1;
  if (e > observed || observed < threshold) return 0;
  return (observed - e) ** 2 / e;
}

export interface MaxScore {
  score: number;
  atMs: number;
}

/**
 * A hashtag's or link's score at `atMs` from today's and yesterday's unique accounts and its
 * previous best: the new best (kept for `maxScoreCooldownMs`) and its decayed value.
 */
export function historyTrendScore(
  observed: number,
  expected: number,
  previous: MaxScore | null,
  atMs: number,
  opts: HistoryTrendOptions,
): { max: MaxScore | null; decayed: number } {
  let max = previous && previous.atMs >= atMs - opts.maxScoreCooldownMs ? previous : null;
  const score = rawScore(observed, expected, opts.threshold);
  if (score > (max?.score ?? 0)) max = { score, atMs };
  if (!max || max.score === 0) return { max, decayed: 0 };
  return { max, decayed: max.score * 0.5 ** ((atMs - max.atMs) / opts.maxScoreHalflifeMs) };
}

/** A status's score from its unique interacting accounts, decayed by its age. */
export function statusTrendScore(
  observed: number,
  createdAtMs: number,
  atMs: number,
  opts: StatusTrendOptions,
): number {
  const score = rawScore(observed, 1, opts.threshold);
  return score * 0.5 ** ((atMs - createdAtMs) / opts.scoreHalflifeMs);
}

export const dayNumber = (ms: number): number => Math.floor(ms / DAY);
export const DAY_MS = DAY;
