// Mastodon's trend formulas (app/models/trends/*.rb) as implemented in core/trends/scoring.ts.
import {
  historyTrendScore,
  rawScore,
  statusTrendScore,
  LINK_TREND_OPTIONS,
  STATUS_TREND_OPTIONS,
  TAG_TREND_OPTIONS,
} from '../../../services/core/trends/scoring.ts';

const HOUR = 3_600_000;

test('raw score: (observed - expected)² / expected, 0 under the threshold or expectation', () => {
  expect(rawScore(25, 5, 5)).toBe(80);
  expect(rawScore(25, 0, 5)).toBe(576); // no history: expected counts as 1
  expect(rawScore(4, 1, 5)).toBe(0);
  expect(rawScore(10, 20, 5)).toBe(0);
});

test('hashtags keep their best score for two days and halve it every 4 hours', () => {
  const at = Date.UTC(2026, 0, 10, 12);
  const first = historyTrendScore(25, 5, null, at, TAG_TREND_OPTIONS);
  expect(first).toEqual({ max: { score: 80, atMs: at }, decayed: 80 });
  const later = historyTrendScore(6, 5, first.max, at + 4 * HOUR, TAG_TREND_OPTIONS);
  expect(later.max).toEqual(first.max);
  expect(later.decayed).toBeCloseTo(40);
  // A better score replaces the best; after the cool-down the old best is forgotten.
  expect(historyTrendScore(45, 5, first.max, at + HOUR, TAG_TREND_OPTIONS).max).toEqual({
    score: 320,
    atMs: at + HOUR,
  });
  expect(historyTrendScore(1, 5, first.max, at + 49 * HOUR, TAG_TREND_OPTIONS)).toEqual({ max: null, decayed: 0 });
});

test('links need 15 unique accounts and halve every 8 hours', () => {
  const at = Date.UTC(2026, 0, 10, 12);
  expect(historyTrendScore(14, 0, null, at, LINK_TREND_OPTIONS).decayed).toBe(0);
  const r = historyTrendScore(15, 0, null, at, LINK_TREND_OPTIONS);
  expect(r.decayed).toBe(196);
  expect(historyTrendScore(0, 0, r.max, at + 8 * HOUR, LINK_TREND_OPTIONS).decayed).toBeCloseTo(98);
});

test('statuses: interacting accounts against one, halved for every hour of age', () => {
  const created = Date.UTC(2026, 0, 10, 12);
  expect(statusTrendScore(11, created, created, STATUS_TREND_OPTIONS)).toBe(100);
  expect(statusTrendScore(11, created, created + 2 * HOUR, STATUS_TREND_OPTIONS)).toBeCloseTo(25);
  expect(statusTrendScore(4, created, created, STATUS_TREND_OPTIONS)).toBe(0);
});
