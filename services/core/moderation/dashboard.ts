// The admin dashboard's numbers (Mastodon's Admin::Metrics): measures (a value per day over a date
// range) here; dimensions (a breakdown by language, server, ...) and retention cohorts in
// dashboardBreakdowns.ts; all computed from the stored data. Days are UTC; `end_at` is inclusive; ranges are capped at a year.
import type { Document, Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { statusIdFloor, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { users } from '../model/users.ts';
import { statuses } from '../model/statuses.ts';
import { favourites } from '../model/favourites.ts';
import { follows } from '../model/follows.ts';
import { mediaAttachments as media } from '../model/media.ts';
import { reports } from '../model/reports.ts';
import { normalizeDomain } from './domainBlocks.ts';

export const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

export const MEASURE_KEYS = [
  'active_users',
  'new_users',
  'interactions',
  'opened_reports',
  'resolved_reports',
  'tag_accounts',
  'tag_uses',
  'tag_servers',
  'instance_accounts',
  'instance_media_attachments',
  'instance_reports',
  'instance_statuses',
  'instance_follows',
  'instance_followers',
] as const;

export const DIMENSION_KEYS = [
  'languages',
  'sources',
  'servers',
  'space_usage',
  'software_versions',
  'tag_servers',
  'tag_languages',
  'instance_accounts',
  'instance_languages',
] as const;

export interface DateRange {
  start: Date;
  /** Exclusive: the midnight after the last day. */
  end: Date;
}

export function midnight(d: Date): Date {
  return new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
}

/** The days of `start_at`..`end_at` (times ignored); null when either is missing or invalid. */
export function parseRange(startAt: unknown, endAt: unknown): DateRange | null {
  if (typeof startAt !== 'string' || typeof endAt !== 'string') return null;
  const s = new Date(startAt);
  const e = new Date(endAt);
  if (Number.isNaN(s.getTime()) || Number.isNaN(e.getTime())) return null;
  const start = midnight(s);
  let end = new Date(midnight(e).getTime() + DAY_MS);
  if (end <= start) return null;
  if ((end.getTime() - start.getTime()) / DAY_MS > MAX_DAYS) end = new Date(start.getTime() + MAX_DAYS * DAY_MS);
  return { start, end };
}

function days(range: DateRange): Date[] {
  const out: Date[] = [];
  for (let t = range.start.getTime(); t < range.end.getTime(); t += DAY_MS) out.push(new Date(t));
  return out;
}

function dayKey(d: Date): number {
  return Math.floor(d.getTime() / DAY_MS);
}

function previousRange(range: DateRange): DateRange {
  const length = range.end.getTime() - range.start.getTime();
  return { start: new Date(range.start.getTime() - length), end: range.start };
}

/** Per-day counts of documents (or of distinct `distinct(doc)` values) whose `dateOf(doc)` falls in the range. */
async function perDay<T extends Document>(
  docs: AsyncIterable<T> | T[],
  dateOf: (doc: T) => Date | null,
  distinct?: (doc: T) => string | null,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const seen = new Map<number, Set<string>>();
  for await (const doc of docs) {
    const at = dateOf(doc);
    if (!at) continue;
    const k = dayKey(at);
    if (distinct) {
      const v = distinct(doc);
      if (v === null) continue;
      const set = seen.get(k) ?? new Set<string>();
      set.add(v);
      seen.set(k, set);
      counts.set(k, set.size);
    } else {
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  return counts;
}

export function statusRange(range: DateRange): Filter<{ _id: Id }> {
  return { _id: { $gte: statusIdFloor(range.start), $lt: statusIdFloor(range.end) } };
}

export function createdIn(range: DateRange) {
  return { createdAt: { $gte: range.start, $lt: range.end } };
}

export interface Measure {
  key: string;
  unit: string | null;
  total: string;
  previous_total?: string;
  human_value?: string;
  data: { date: string; value: string }[];
}

type Counter = (range: DateRange) => Promise<{ perDay: Map<number, number>; total: number }>;

function summed(fn: (range: DateRange) => Promise<Map<number, number>>): Counter {
  return async (range) => {
    const m = await fn(range);
    return { perDay: m, total: [...m.values()].reduce((a, b) => a + b, 0) };
  };
}

export async function domainAccountIds(core: Core, domain: string): Promise<Id[]> {
  return (
    await collection(core.db, accounts)
      .find({ domain }, { projection: { _id: 1 } })
      .toArray()
  ).map((a) => a._id);
}

function counterFor(core: Core, key: string, params: Record<string, unknown>): Counter | null {
  const db = core.db;
  const param = (name: string): string | null => {
    const v = (params[key] as Record<string, unknown> | undefined)?.[name];
    return typeof v === 'string' && v !== '' ? v : null;
  };
  switch (key) {
    case 'new_users':
      return summed(async (r) =>
        perDay(
          await collection(db, users)
            .find(createdIn(r), { projection: { createdAt: 1 } })
            .toArray(),
          (u) => u.createdAt,
        ),
      );
    case 'active_users':
      // People who logged in or posted that day (a login counts on its latest day only).
      return async (r) => {
        const [logins, posts] = await Promise.all([
          collection(db, users)
            .find({ lastSignInAt: { $gte: r.start, $lt: r.end } }, { projection: { accountId: 1, lastSignInAt: 1 } })
            .toArray(),
          collection(db, statuses)
            .find({ ...statusRange(r), local: true }, { projection: { _id: 1, accountId: 1 } })
            .toArray(),
        ]);
        const events = [
          ...logins.map((u) => ({ at: u.lastSignInAt as Date, who: String(u.accountId) })),
          ...posts.map((s) => ({ at: new Date(Number(s._id >> 16n)), who: String(s.accountId) })),
        ];
        const m = await perDay(
          events,
          (e) => e.at,
          (e) => e.who,
        );
        return { perDay: m, total: new Set(events.map((e) => e.who)).size };
      };
    case 'interactions':
      // Favourites, reblogs and replies received by local statuses.
      return summed(async (r) => {
        const localIds = async (ids: Id[]) =>
          new Set(
            (
              await collection(db, statuses)
                .find({ _id: { $in: ids }, local: true }, { projection: { _id: 1 } })
                .toArray()
            ).map((s) => s._id),
          );
        const favs = await collection(db, favourites)
          .find(createdIn(r), { projection: { statusId: 1, createdAt: 1 } })
          .toArray();
        const favLocal = await localIds(favs.map((f) => f.statusId));
        const acts = await collection(db, statuses)
          .find(
            { ...statusRange(r), $or: [{ reblogOfId: { $ne: null } }, { inReplyToId: { $ne: null } }] },
            { projection: { _id: 1, reblogOfId: 1, inReplyToId: 1 } },
          )
          .toArray();
        const actLocal = await localIds(acts.map((s) => (s.reblogOfId ?? s.inReplyToId) as Id));
        return perDay(
          [
            ...favs.filter((f) => favLocal.has(f.statusId)).map((f) => f.createdAt),
            ...acts
              .filter((s) => actLocal.has((s.reblogOfId ?? s.inReplyToId) as Id))
              .map((s) => new Date(Number(s._id >> 16n))),
          ].map((at) => ({ at })),
          (e) => e.at,
        );
      });
    case 'opened_reports':
      return summed(async (r) =>
        perDay(await collection(db, reports).find(createdIn(r)).toArray(), (x) => x.createdAt),
      );
    case 'resolved_reports':
      return summed(async (r) =>
        perDay(
          await collection(db, reports)
            .find({ actionTakenAt: { $gte: r.start, $lt: r.end } })
            .toArray(),
          (x) => x.actionTakenAt,
        ),
      );
    case 'tag_accounts':
    case 'tag_uses':
    case 'tag_servers': {
      const rawId = param('id');
      if (!rawId || !/^\d{1,20}$/.test(rawId)) return null;
      const tagId = BigInt(rawId);
      return async (r) => {
        const list = await collection(db, statuses)
          .find({ ...statusRange(r), 'tags.id': tagId, deletedAt: null }, { projection: { _id: 1, accountId: 1 } })
          .toArray();
        const at = (s: { _id: Id }) => new Date(Number(s._id >> 16n));
        if (key === 'tag_uses') {
          const m = await perDay(list, at);
          return { perDay: m, total: list.length };
        }
        let who = (s: { accountId: Id }) => String(s.accountId);
        if (key === 'tag_servers') {
          const domains = new Map(
            (
              await collection(db, accounts)
                .find({ _id: { $in: [...new Set(list.map((s) => s.accountId))] } }, { projection: { domain: 1 } })
                .toArray()
            ).map((a) => [String(a._id), a.domain ?? core.config.localDomain]),
          );
          who = (s) => domains.get(String(s.accountId)) ?? '';
        }
        const m = await perDay(list, at, who);
        return { perDay: m, total: new Set(list.map(who)).size };
      };
    }
    case 'instance_accounts':
    case 'instance_media_attachments':
    case 'instance_reports':
    case 'instance_statuses':
    case 'instance_follows':
    case 'instance_followers': {
      const domain = param('domain') ? normalizeDomain(param('domain') as string) : null;
      if (!domain) return null;
      return async (r) => {
        const ids = await domainAccountIds(core, domain);
        switch (key) {
          case 'instance_accounts': {
            const m = await perDay(
              await collection(db, accounts)
                .find({ domain, ...createdIn(r) })
                .toArray(),
              (a) => a.createdAt,
            );
            return { perDay: m, total: [...m.values()].reduce((a, b) => a + b, 0) };
          }
          case 'instance_statuses': {
            const list = await collection(db, statuses)
              .find({ ...statusRange(r), accountId: { $in: ids } }, { projection: { _id: 1 } })
              .toArray();
            return { perDay: await perDay(list, (s) => new Date(Number(s._id >> 16n))), total: list.length };
          }
          case 'instance_media_attachments': {
            const list = await collection(db, media)
              .find({ accountId: { $in: ids }, ...createdIn(r) })
              .toArray();
            const m = new Map<number, number>();
            for (const x of list)
              m.set(dayKey(x.createdAt), (m.get(dayKey(x.createdAt)) ?? 0) + (x.files.fileSize ?? 0));
            return { perDay: m, total: [...m.values()].reduce((a, b) => a + b, 0) };
          }
          case 'instance_reports': {
            const m = await perDay(
              await collection(db, reports)
                .find({ targetAccountId: { $in: ids }, ...createdIn(r) })
                .toArray(),
              (x) => x.createdAt,
            );
            return { perDay: m, total: [...m.values()].reduce((a, b) => a + b, 0) };
          }
          default: {
            // Follows from local accounts to the server (instance_follows) or from it to us (instance_followers).
            const locals = (
              await collection(db, accounts)
                .find({ domain: null }, { projection: { _id: 1 } })
                .toArray()
            ).map((a) => a._id);
            const filter =
              key === 'instance_follows'
                ? { accountId: { $in: locals }, targetAccountId: { $in: ids } }
                : { accountId: { $in: ids }, targetAccountId: { $in: locals } };
            const m = await perDay(
              await collection(db, follows)
                .find({ ...filter, ...createdIn(r) })
                .toArray(),
              (f) => f.createdAt,
            );
            return { perDay: m, total: [...m.values()].reduce((a, b) => a + b, 0) };
          }
        }
      };
    }
  }
  return null;
}

const UNITS: Record<string, string> = { instance_media_attachments: 'bytes' };

export async function computeMeasures(
  core: Core,
  keys: string[],
  range: DateRange,
  params: Record<string, unknown>,
): Promise<Measure[]> {
  const out: Measure[] = [];
  for (const key of keys) {
    const counter = counterFor(core, key, params);
    if (!counter) continue;
    const [now, before] = await Promise.all([counter(range), counter(previousRange(range))]);
    out.push({
      key,
      unit: UNITS[key] ?? null,
      total: String(now.total),
      human_value: UNITS[key] === 'bytes' ? humanBytes(now.total) : undefined,
      previous_total: String(before.total),
      data: days(range).map((d) => ({ date: d.toISOString(), value: String(now.perDay.get(dayKey(d)) ?? 0) })),
    });
  }
  return out;
}

export function humanBytes(n: number): string {
  const units = ['Bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}
