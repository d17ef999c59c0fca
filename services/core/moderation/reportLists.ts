// Reading reports for the moderation pages: the open ones counted, and a page of them filtered as
// the reports page filters (open or resolved, assigned to one moderator, against one domain).
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findPageIn, type PageParams } from '../db/pages.ts';
import { reports, type ReportDoc } from '../model/reports.ts';
import { domainAccountIds } from './dashboard.ts';

/** How many reports wait for action. */
export function countOpenReports(core: Core): Promise<number> {
  return collection(core.db, reports).countDocuments({ actionTakenAt: null });
}

export interface ReportListFilter {
  resolved: boolean;
  /** Only those assigned to this moderator's account. */
  assignedTo: Id | null;
  /** Only those against accounts of this domain (lowercase). */
  targetDomain: string | null;
}

/** A page of reports under `f`, newest first. */
export async function reportsPage(core: Core, f: ReportListFilter, p: PageParams): Promise<ReportDoc[]> {
  const filter: Filter<ReportDoc> = { actionTakenAt: f.resolved ? { $ne: null } : null };
  if (f.assignedTo !== null) filter.assignedAccountId = f.assignedTo;
  if (f.targetDomain) filter.targetAccountId = { $in: await domainAccountIds(core, f.targetDomain) };
  return findPageIn(core.db, reports, filter, p);
}
