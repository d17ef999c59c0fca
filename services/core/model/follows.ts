// Follows (accepted). Pending ones live in follow_requests until the target accepts.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface FollowDoc extends AccountRecordDoc {
  targetAccountId: Id;
  showReblogs: boolean;
  notify: boolean;
  languages: string[] | null;
  /** ActivityPub id of the Follow activity. */
  uri: string | null;
}

export const follows = defineCollection<FollowDoc>(
  'follows',
  [
    ...accountRecordIndexes('targetAccountId', { unique: 'account_target', newestFirst: 'account' }),
    { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
    // The followers who asked to be notified of an account's posts (a few), asked of every post:
    // without it every follower record of the authors was read and matched.
    { key: { targetAccountId: 1, notify: 1 }, name: 'target_notify' },
  ],
  // Counted: whom a viewer follows is kept in the process for a moment (statuses/visibility.ts).
  // Cached by target: an account's followers are kept in Redis for its posts' fan-out
  // (feeds/followerLists.ts), and every write drops the targets' entries.
  { countWrites: true, cachedBy: 'targetAccountId' },
);
