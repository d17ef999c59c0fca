// Annual reports (Mastodon's Wrapstodon). A user asks for the report of a year (POST
// /api/v1/annual_reports/:year/generate): the request is stored as `generating` together with an
// AnnualReportRequested event (one outbox write), and the annual-reports pipeline computes the
// report from what is stored (the year's statuses, follows and hashtags) and makes it
// `available`. Eligibility: the year's campaign is open (a past year, or the current one from
// 10 December, when Mastodon offers it) and the account posted at least one status that year.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { follows } from '../model/follows.ts';
import { annualReports, type AnnualReportData, type AnnualReportDoc } from '../model/annualReports.ts';

export const ANNUAL_REPORT_SCHEMA_VERSION = 2;
/** Mastodon offers the current year's report from 10 December (its campaign start). */
const CAMPAIGN_START = { month: 11, day: 10 };

export type AnnualReportState = 'available' | 'generating' | 'eligible' | 'ineligible';

const reportId = (accountId: Id, year: number) => `${accountId}:${year}`;

function yearRange(year: number): { $gte: Date; $lt: Date } {
  return { $gte: new Date(Date.UTC(year, 0, 1)), $lt: new Date(Date.UTC(year + 1, 0, 1)) };
}

function campaignOpen(year: number, now: Date): boolean {
  const current = now.getUTCFullYear();
  if (!Number.isInteger(year) || year < 2016 || year > current) return false;
  if (year < current) return true;
  return now >= new Date(Date.UTC(year, CAMPAIGN_START.month, CAMPAIGN_START.day));
}

async function eligible(core: Core, accountId: Id, year: number, now: Date): Promise<boolean> {
  if (!campaignOpen(year, now)) return false;
  const one = await collection(core.db, statuses).findOne(
    { accountId, createdAt: yearRange(year), deletedAt: null },
    { projection: { _id: 1 } },
  );
  return one !== null;
}

export function findReport(core: Core, accountId: Id, year: number): Promise<AnnualReportDoc | null> {
  return collection(core.db, annualReports).findOne({ _id: reportId(accountId, year) });
}

export async function reportState(
  core: Core,
  accountId: Id,
  year: number,
  now = new Date(),
): Promise<AnnualReportState> {
  const doc = await findReport(core, accountId, year);
  if (doc) return doc.state;
  return (await eligible(core, accountId, year, now)) ? 'eligible' : 'ineligible';
}

/** Asks for the report: true when it is (now) being generated, false when available or ineligible. */
export async function requestReport(core: Core, accountId: Id, year: number, now = new Date()): Promise<boolean> {
  const state = await reportState(core, accountId, year, now);
  if (state === 'generating') return true;
  if (state !== 'eligible') return false;
  const doc: AnnualReportDoc = {
    _id: reportId(accountId, year),
    accountId,
    year,
    state: 'generating',
    data: null,
    schemaVersion: ANNUAL_REPORT_SCHEMA_VERSION,
    viewedAt: null,
    requestedAt: now,
    generatedAt: null,
  };
  await core.outbox.write(
    [
      {
        type: 'AnnualReportRequested' as const,
        key: String(accountId),
        payload: { accountId: String(accountId), year },
        verify: { collection: annualReports.name, filter: { _id: doc._id }, expect: 'exists' as const },
      },
    ],
    async () => {
      // Two requests at once: the second finds the first's document and changes nothing.
      await collection(core.db, annualReports).updateOne({ _id: doc._id }, { $setOnInsert: doc }, { upsert: true });
    },
  );
  return true;
}

/** Mastodon's archetype rule, from the year's own posts, replies, boosts and polls. */
function archetypeOf(c: { standalone: number; replies: number; reblogs: number; polls: number }) {
  if (c.standalone + c.replies + c.reblogs < 10) return 'lurker' as const;
  if (c.reblogs > c.standalone * 2) return 'booster' as const;
  if (c.polls > c.standalone * 0.1) return 'pollster' as const;
  if (c.replies > c.standalone * 2) return 'replier' as const;
  return 'oracle' as const;
}

/** Computes a report from the stored data (reads the account's statuses and follows of the year). */
export async function computeReport(core: Core, accountId: Id, year: number): Promise<AnnualReportData> {
  const range = yearRange(year);
  const months = Array.from({ length: 12 }, (_, i) => ({ month: i + 1, statuses: 0, following: 0, followers: 0 }));
  const counts = { standalone: 0, replies: 0, reblogs: 0, polls: 0 };
  const tags = new Map<string, number>();
  const best = { by_reblogs: null, by_favourites: null, by_replies: null } as Record<
    'by_reblogs' | 'by_favourites' | 'by_replies',
    { id: Id; n: number } | null
  >;
  const consider = (key: keyof typeof best, s: Pick<StatusDoc, '_id'>, n: number) => {
    const current = best[key];
    if (n > 0 && (!current || n > current.n)) best[key] = { id: s._id, n };
  };
  const cursor = collection(core.db, statuses).find(
    { accountId, createdAt: range, deletedAt: null },
    {
      projection: {
        createdAt: 1,
        reblogOfId: 1,
        inReplyToAccountId: 1,
        pollId: 1,
        tagNames: 1,
        reblogsCount: 1,
        favouritesCount: 1,
        repliesCount: 1,
        visibility: 1,
      },
    },
  );
  for await (const s of cursor) {
    months[s.createdAt.getUTCMonth()].statuses++;
    if (s.reblogOfId !== null) {
      counts.reblogs++;
      continue;
    }
    if (s.inReplyToAccountId !== null && s.inReplyToAccountId !== accountId) counts.replies++;
    else counts.standalone++;
    if (s.pollId !== null) counts.polls++;
    for (const t of s.tagNames) tags.set(t, (tags.get(t) ?? 0) + 1);
    // Only public posts are shown off in a report meant to be shared.
    if (s.visibility !== 'public' && s.visibility !== 'unlisted') continue;
    consider('by_reblogs', s, s.reblogsCount);
    consider('by_favourites', s, s.favouritesCount);
    consider('by_replies', s, s.repliesCount);
  }
  const follow = collection(core.db, follows);
  for await (const f of follow.find({ accountId, createdAt: range }, { projection: { createdAt: 1 } }))
    months[f.createdAt.getUTCMonth()].following++;
  for await (const f of follow.find({ targetAccountId: accountId, createdAt: range }, { projection: { createdAt: 1 } }))
    months[f.createdAt.getUTCMonth()].followers++;
  const id = (b: { id: Id } | null) => (b ? String(b.id) : null);
  return {
    archetype: archetypeOf(counts),
    time_series: months,
    top_hashtags: [...tags]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 5)
      .map(([name, count]) => ({ name, count })),
    top_statuses: {
      by_reblogs: id(best.by_reblogs),
      by_favourites: id(best.by_favourites),
      by_replies: id(best.by_replies),
    },
  };
}

/** The pipeline's step: computes and stores a requested report (idempotent: an available one stays). */
export async function generateReport(core: Core, accountId: Id, year: number): Promise<void> {
  const doc = await findReport(core, accountId, year);
  if (!doc || doc.state === 'available') return;
  const data = await computeReport(core, accountId, year);
  await collection(core.db, annualReports).updateOne(
    { _id: doc._id, state: 'generating' },
    { $set: { state: 'available', data, generatedAt: new Date() } },
  );
}

export async function availableReports(core: Core, accountId: Id, year?: number): Promise<AnnualReportDoc[]> {
  return collection(core.db, annualReports)
    .find({ accountId, state: 'available', ...(year === undefined ? {} : { year }) })
    .sort({ year: 1 })
    .toArray();
}

/** POST /api/v1/annual_reports/:year/read; false when there is no report to mark. */
export async function markReportRead(core: Core, accountId: Id, year: number): Promise<boolean> {
  const res = await collection(core.db, annualReports).updateOne(
    { _id: reportId(accountId, year), state: 'available' },
    { $set: { viewedAt: new Date() } },
  );
  return res.matchedCount > 0;
}
