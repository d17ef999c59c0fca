// Statuses to be published later. The scheduler claims a due record with a lease
// (claimedUntil) before it publishes, so several scheduler processes publish each one once.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import type { PostingPrivacy } from './users.ts';

export interface ScheduledPollParams {
  options: string[];
  expiresIn: number;
  multiple: boolean;
  hideTotals: boolean;
}

/** What POST /api/v1/statuses was asked to post, kept until publication. */
export interface ScheduledStatusParams {
  text: string;
  spoilerText: string;
  sensitive: boolean;
  visibility: PostingPrivacy;
  language: string | null;
  inReplyToId: Id | null;
  mediaIds: Id[];
  poll: ScheduledPollParams | null;
  /** Quote posts (absent in records made before them). */
  quotedStatusId?: Id | null;
  quotePolicy?: 'public' | 'followers' | 'nobody' | null;
}

export interface ScheduledStatusDoc {
  _id: Id;
  accountId: Id;
  scheduledAt: Date;
  params: ScheduledStatusParams;
  applicationId: Id | null;
  /** Idempotency-Key of the creating request (the same key returns this record). */
  idempotencyKey: string | null;
  /** Lease of the scheduler process publishing it; null while waiting. */
  claimedUntil: Date | null;
  claimedBy: string | null;
  /** Publication attempts (a poison record stops being retried after a few). */
  attempts: number;
  lastError: string | null;
  createdAt: Date;
}

export const scheduledStatuses = defineCollection<ScheduledStatusDoc>('scheduled_statuses', [
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { scheduledAt: 1 }, name: 'due' },
  { key: { accountId: 1, idempotencyKey: 1 }, name: 'idempotency' },
]);

/**
 * One document per claimed attempt of a scheduler job on a record (`<job>:<recordId>#<attempt>`).
 * Claims rely only on the unique _id, the one write the MongoDB-wire stand-in performs atomically
 * (its findOneAndUpdate/updateOne are not compare-and-set under concurrency).
 */
export interface SchedulerClaimDoc {
  _id: string;
  owner: string;
  createdAt: Date;
}

export const schedulerClaims = defineCollection<SchedulerClaimDoc>('scheduler_claims', [
  { key: { createdAt: 1 }, name: 'created' },
]);
