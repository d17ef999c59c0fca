// Trend review decisions: one document per reviewed or review-requested item (hashtag, status or
// link), Mastodon's trendable / reviewed_at / requested_review_at columns in one place. The
// counters and rankings themselves live in Redis (services/core/trends/), rebuilt by use.
import { defineCollection } from '../db/mongo.ts';

export type TrendKind = 'tag' | 'status' | 'link';
export const TREND_KINDS: readonly TrendKind[] = ['tag', 'status', 'link'];
/** What can be reviewed: trending items, and link publishers (approving one lets its links trend). */
export type ReviewKind = TrendKind | 'publisher';

export interface TrendReviewDoc {
  /** `<kind>:<itemId>` */
  _id: string;
  kind: ReviewKind;
  /** Normalised tag name, status id, preview card id or publisher domain. */
  itemId: string;
  /** null: waiting for review. */
  state: 'approved' | 'rejected' | null;
  reviewedAt: Date | null;
  reviewedByAccountId: string | null;
  requestedReviewAt: Date | null;
  /** Whether a review notice has mentioned it already. */
  noticeSent: boolean;
}

export const trendReviews = defineCollection<TrendReviewDoc>('trend_reviews', [
  { key: { kind: 1, state: 1 }, name: 'kind_state' },
  { key: { noticeSent: 1, requestedReviewAt: 1 }, name: 'notice' },
]);

export const trendReviewId = (kind: ReviewKind, itemId: string | bigint): string => `${kind}:${itemId}`;
