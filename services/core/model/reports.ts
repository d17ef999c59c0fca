// Reports (Mastodon's Report): an account reports another, optionally with some of its statuses and
// the instance rules they break. Moderators assign, resolve and reopen them; strikes point back.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type ReportCategory = 'spam' | 'legal' | 'violation' | 'other';
export const REPORT_CATEGORIES: readonly ReportCategory[] = ['spam', 'legal', 'violation', 'other'];

export interface ReportDoc {
  _id: Id;
  /** The reporter (local, or the remote server's representative account for a received Flag). */
  accountId: Id;
  targetAccountId: Id;
  statusIds: Id[];
  ruleIds: Id[];
  comment: string;
  category: ReportCategory;
  /** Forwarded to the target's server as a Flag. */
  forwarded: boolean;
  /** Extra servers the reporter asked to forward to (those of the reported statuses' audience). */
  forwardToDomains: string[];
  /** ActivityPub id of the Flag (ours, or the sender's for a received one). */
  uri: string | null;
  assignedAccountId: Id | null;
  actionTakenAt: Date | null;
  actionTakenByAccountId: Id | null;
  createdAt: Date;
  updatedAt: Date;
}

export const reports = defineCollection<ReportDoc>('reports', [
  { key: { actionTakenAt: 1, _id: -1 }, name: 'resolved' },
  { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
  { key: { accountId: 1, _id: -1 }, name: 'reporter' },
]);

/** Strikes (Mastodon's AccountWarning): what a moderator did to an account, shown to its owner. */
export type WarningAction =
  'none' | 'disable' | 'mark_statuses_as_sensitive' | 'delete_statuses' | 'sensitive' | 'silence' | 'suspend';

export interface AccountWarningDoc {
  _id: Id;
  /** The moderator; null for the command line. */
  accountId: Id | null;
  targetAccountId: Id;
  action: WarningAction;
  text: string;
  statusIds: Id[];
  reportId: Id | null;
  createdAt: Date;
}

export const accountWarnings = defineCollection<AccountWarningDoc>('account_warnings', [
  { key: { targetAccountId: 1, _id: -1 }, name: 'target' },
]);
