// Hashtags an account follows (their statuses reach its home feed).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface TagFollowDoc extends AccountRecordDoc {
  tagId: Id;
}

export const tagFollows = defineCollection<TagFollowDoc>(
  'tag_follows',
  [
    ...accountRecordIndexes('tagId', { unique: 'account_tag', newestFirst: 'account' }),
    { key: { tagId: 1 }, name: 'tag' },
  ],
  // Cached by tag: a hashtag's followers are kept in Redis for the fan-out of its statuses
  // (feeds/fanOutWrites.ts), and every write drops the tags' entries.
  { cachedBy: 'tagId' },
);
