// Pending follow requests: to a locked local account, or to a remote one until its Accept arrives.
// Authorizing turns one into a follow (same options); the serial id is the pagination cursor.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface FollowRequestDoc {
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

export const followRequests = defineCollection<FollowRequestDoc>('follow_requests', [
  { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
  { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
]);
