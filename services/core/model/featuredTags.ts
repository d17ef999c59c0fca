// Hashtags featured on a profile (at most 10 per account).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import type { AccountRecordDoc } from './accountRecord.ts';

export interface FeaturedTagDoc extends AccountRecordDoc {
  tagId: Id;
  /** Display name of the tag. */
  name: string;
  nameNormalized: string;
}

export const featuredTags = defineCollection<FeaturedTagDoc>('featured_tags', [
  { key: { accountId: 1, tagId: 1 }, name: 'account_tag', unique: true },
]);

export interface SuggestionDismissalDoc {
  _id: string;
  accountId: Id;
  targetAccountId: Id;
  createdAt: Date;
}

/** Follow suggestions a user dismissed (`_id` = "<accountId>:<targetAccountId>"). */
export const suggestionDismissals = defineCollection<SuggestionDismissalDoc>('suggestion_dismissals', [
  { key: { accountId: 1 }, name: 'account' },
]);
