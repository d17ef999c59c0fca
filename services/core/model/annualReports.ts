// Annual reports (Wrapstodon): one per account and year, asked for through the API and computed
// by the annual-reports pipeline from the stored data (core/annualReports/).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AnnualReportData {
  archetype: 'lurker' | 'booster' | 'pollster' | 'replier' | 'oracle';
  time_series: { month: number; statuses: number; following: number; followers: number }[];
  top_hashtags: { name: string; count: number }[];
  top_statuses: { by_reblogs: string | null; by_favourites: string | null; by_replies: string | null };
}

export interface AnnualReportDoc {
  /** `<accountId>:<year>`. */
  _id: string;
  accountId: Id;
  year: number;
  /** `generating` until the pipeline stored `data`. */
  state: 'generating' | 'available';
  data: AnnualReportData | null;
  schemaVersion: number;
  viewedAt: Date | null;
  requestedAt: Date;
  generatedAt: Date | null;
}

export const annualReports = defineCollection<AnnualReportDoc>('annual_reports', [
  { key: { accountId: 1, year: -1 }, name: 'account_year' },
]);
