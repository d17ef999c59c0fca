// Polls belong to one status. Votes are one document per voter (all their choices), unique per
// (poll, account): the unique index is what stops double voting under concurrency. A running poll is
// counted from its votes; the counts stored on the poll are final once it closed (or, for a remote
// poll, what its server reported).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface PollDoc {
  _id: Id;
  statusId: Id;
  accountId: Id;
  options: string[];
  multiple: boolean;
  hideTotals: boolean;
  /** null: never ends. */
  expiresAt: Date | null;
  /** Set by the scheduler when the poll ended and its PollExpired event went out. */
  closedAt: Date | null;
  /** Lease of the scheduler process closing it, and its attempts (see closeExpiredPolls). */
  closingUntil?: Date | null;
  closingAttempts?: number;
  /** Local polls: when the Update of the Question for recent votes is due (null: none pending). */
  updateDueAt?: Date | null;
  /** Votes per option, same order as options (final once closed; see polls.ts pollCounts). */
  tallies: number[];
  /** Total choices made (Mastodon's votes_count). */
  votesCount: number;
  /** Distinct voters. */
  votersCount: number;
  /** Incremented when an edit changes options and resets votes; votes of older versions do not count. */
  version: number;
  /** ActivityPub: remote polls keep their server's counts. */
  remote: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface PollVoteDoc {
  _id: Id;
  pollId: Id;
  accountId: Id;
  /** Indexes into options. */
  choices: number[];
  /** ActivityPub ids of the vote notes (remote voters / our votes on remote polls). */
  uri: string | null;
  createdAt: Date;
}

export const polls = defineCollection<PollDoc>('polls', [
  { key: { statusId: 1 }, name: 'status' },
  { key: { closedAt: 1, expiresAt: 1 }, name: 'open_expiry' },
  { key: { updateDueAt: 1 }, name: 'update_due' },
]);

export const pollVotes = defineCollection<PollVoteDoc>('poll_votes', [
  { key: { pollId: 1, accountId: 1 }, name: 'poll_account', unique: true },
  { key: { pollId: 1, choices: 1 }, name: 'poll_choices' },
]);
