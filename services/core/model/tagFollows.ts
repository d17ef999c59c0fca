// Hashtags an account follows (their statuses reach its home feed).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface TagFollowDoc {
  _id: Id;
  accountId: Id;
  tagId: Id;
  createdAt: Date;
}

export const tagFollows = defineCollection<TagFollowDoc>('tag_follows', [
  { key: { accountId: 1, tagId: 1 }, name: 'account_tag', unique: true },
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { tagId: 1 }, name: 'tag' },
]);
