// Follows (accepted). Pending ones live in follow_requests until the target accepts.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface FollowDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  showReblogs: boolean;
  notify: boolean;
  languages: string[] | null;
  /** ActivityPub id of the Follow activity. */
  uri: string | null;
  createdAt: Date;
}

export const follows = defineCollection<FollowDoc>(
  'follows',
  [
    { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
    { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
    { key: { accountId: 1, _id: -1 }, name: 'account' },
  ],
  // Counted: whom a viewer follows is kept in the process for a moment (statuses/visibility.ts).
  { countWrites: true },
);
