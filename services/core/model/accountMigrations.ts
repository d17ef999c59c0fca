// Moves of local accounts to another account (Mastodon's AccountMigration), for the 30-day
// cool-down and the history on /settings/migration; and self-service deletions waiting for the
// scheduler to remove the data.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AccountMigrationDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  /** The target's acct as typed and its ActivityPub id when it was moved to. */
  acct: string;
  targetUri: string;
  followersCount: number;
  createdAt: Date;
}

export const accountMigrations = defineCollection<AccountMigrationDoc>('account_migrations', [
  { key: { accountId: 1, _id: -1 }, name: 'account' },
]);

export interface AccountDeletionRequestDoc {
  /** The account's id. */
  _id: Id;
  userId: Id;
  requestedAt: Date;
  /** A scheduler process holds the deletion until then. */
  leaseUntil: Date | null;
}

export const accountDeletionRequests = defineCollection<AccountDeletionRequestDoc>('account_deletion_requests', [
  { key: { leaseUntil: 1 }, name: 'lease' },
]);
