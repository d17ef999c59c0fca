// Pending follow requests: to a locked local account, or to a remote one until its Accept arrives.
// Authorizing turns one into a follow (same options); the serial id is the pagination cursor.
import type { FollowDoc } from './follows.ts';
import { defineCollection } from '../db/mongo.ts';

/** The options of the follow it asks for, which authorizing copies. */
export type FollowRequestDoc = FollowDoc;

export const followRequests = defineCollection<FollowRequestDoc>('follow_requests', [
  { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
  { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
]);
