// The admin dashboard's numbers (Mastodon's Admin::Metrics): measures (a value per day over a date
// range), dimensions (a breakdown by language, server, ...) and retention cohorts, computed from
// the stored data. Days are UTC; `end_at` is inclusive; ranges are capped at a year.
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
import { apps } from '../model/oauth.ts';
import { normalizeDomain } from './domainBlocks.ts';

const DAY_MS = 86_400_000;
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

function midnight(d: Date): Date {
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

function statusRange(range: DateRange): Filter<{ _id: Id }> {
  return { _id: { $gte: statusIdFloor(range.start), $lt: statusIdFloor(range.end) } };
}

function createdIn(range: DateRange) {
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

async function domainAccountIds(core: Core, domain: string): Promise<Id[]> {
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

function humanBytes(n: number): string {
  const units = ['Bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

// ---------------------------------------------------------------------------------------------
// Dimensions

export interface Dimension {
  key: string;
  data: { key: string; human_key: string; value: string; unit?: string; human_value?: string }[];
}

function top(counts: Map<string, number>, limit: number, human: (k: string) => string = (k) => k) {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, value]) => ({ key, human_key: human(key), value: String(value) }));
}

function tally<T>(list: T[], keyOf: (x: T) => string | null): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of list) {
    const k = keyOf(x);
    if (k !== null) m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

export async function computeDimensions(
  core: Core,
  keys: string[],
  range: DateRange,
  limit: number,
  params: Record<string, unknown>,
): Promise<Dimension[]> {
  const db = core.db;
  const out: Dimension[] = [];
  const param = (key: string, name: string): string | null => {
    const v = (params[key] as Record<string, unknown> | undefined)?.[name];
    return typeof v === 'string' && v !== '' ? v : null;
  };
  for (const key of keys) {
    switch (key) {
      case 'languages': {
        const list = await collection(db, statuses)
          .find({ ...statusRange(range), local: true }, { projection: { language: 1 } })
          .toArray();
        out.push({
          key,
          data: top(
            tally(list, (s) => s.language),
            limit,
          ),
        });
        break;
      }
      case 'sources': {
        const list = await collection(db, users)
          .find(createdIn(range), { projection: { createdByAppId: 1 } })
          .toArray();
        const appIds = [...new Set(list.map((u) => u.createdByAppId).filter((a): a is Id => a !== null))];
        const names = new Map(
          (
            await collection(db, apps)
              .find({ _id: { $in: appIds } }, { projection: { name: 1 } })
              .toArray()
          ).map((a) => [String(a._id), a.name]),
        );
        out.push({
          key,
          data: top(
            tally(list, (u) => (u.createdByAppId ? (names.get(String(u.createdByAppId)) ?? 'app') : 'web')),
            limit,
          ),
        });
        break;
      }
      case 'servers': {
        const list = await collection(db, statuses)
          .find({ ...statusRange(range), local: false }, { projection: { accountId: 1 } })
          .toArray();
        const domains = new Map(
          (
            await collection(db, accounts)
              .find({ _id: { $in: [...new Set(list.map((s) => s.accountId))] } }, { projection: { domain: 1 } })
              .toArray()
          ).map((a) => [String(a._id), a.domain]),
        );
        out.push({
          key,
          data: top(
            tally(list, (s) => domains.get(String(s.accountId)) ?? null),
            limit,
          ),
        });
        break;
      }
      case 'space_usage': {
        const stats = (await db.command({ dbStats: 1 }).catch(() => ({}))) as { dataSize?: number };
        const mediaBytes = (
          await collection(db, media)
            .find({}, { projection: { files: 1 } })
            .toArray()
        ).reduce((sum, m) => sum + (m.files.fileSize ?? 0), 0);
        const row = (k: string, human: string, bytes: number) => ({
          key: k,
          human_key: human,
          value: String(bytes),
          unit: 'bytes',
          human_value: humanBytes(bytes),
        });
        out.push({
          key,
          data: [row('mongodb', 'MongoDB', stats.dataSize ?? 0), row('media', 'Media storage', mediaBytes)],
        });
        break;
      }
      case 'software_versions': {
        const info = (await db
          .admin()
          .command({ buildInfo: 1 })
          .catch(() => ({}))) as { version?: string };
        out.push({
          key,
          data: [
            { key: 'nodejs', human_key: 'Node.js', value: process.versions.node },
            { key: 'mongodb', human_key: 'MongoDB', value: info.version ?? 'unknown' },
          ],
        });
        break;
      }
      case 'tag_servers':
      case 'tag_languages': {
        const rawId = param(key, 'id');
        if (!rawId || !/^\d{1,20}$/.test(rawId)) break;
        const list = await collection(db, statuses)
          .find({ ...statusRange(range), 'tags.id': BigInt(rawId) }, { projection: { accountId: 1, language: 1 } })
          .toArray();
        if (key === 'tag_languages') {
          out.push({
            key,
            data: top(
              tally(list, (s) => s.language),
              limit,
            ),
          });
        } else {
          const domains = new Map(
            (
              await collection(db, accounts)
                .find({ _id: { $in: [...new Set(list.map((s) => s.accountId))] } }, { projection: { domain: 1 } })
                .toArray()
            ).map((a) => [String(a._id), a.domain ?? core.config.localDomain]),
          );
          out.push({
            key,
            data: top(
              tally(list, (s) => domains.get(String(s.accountId)) ?? null),
              limit,
            ),
          });
        }
        break;
      }
      case 'instance_accounts':
      case 'instance_languages': {
        const raw = param(key, 'domain');
        const domain = raw ? normalizeDomain(raw) : null;
        if (!domain) break;
        const ids = await domainAccountIds(core, domain);
        const list = await collection(db, statuses)
          .find({ ...statusRange(range), accountId: { $in: ids } }, { projection: { accountId: 1, language: 1 } })
          .toArray();
        if (key === 'instance_languages') {
          out.push({
            key,
            data: top(
              tally(list, (s) => s.language),
              limit,
            ),
          });
        } else {
          const names = new Map(
            (
              await collection(db, accounts)
                .find({ _id: { $in: ids } }, { projection: { username: 1 } })
                .toArray()
            ).map((a) => [String(a._id), a.username]),
          );
          out.push({
            key,
            data: top(
              tally(list, (s) => names.get(String(s.accountId)) ?? null),
              limit,
            ),
          });
        }
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Retention

export interface Cohort {
  period: string;
  frequency: 'day' | 'month';
  data: { date: string; rate: number; value: string }[];
}

function periodStart(d: Date, frequency: 'day' | 'month'): Date {
  return frequency === 'day' ? midnight(d) : new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

function nextPeriod(d: Date, frequency: 'day' | 'month'): Date {
  return frequency === 'day'
    ? new Date(d.getTime() + DAY_MS)
    : new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/**
 * Users who signed up in each period, and the share of them still active in each later period
 * (active: posted, or last signed in, at or after that period; the latest sign-in is all we keep).
 */
export async function computeRetention(core: Core, range: DateRange, frequency: 'day' | 'month'): Promise<Cohort[]> {
  const signUps = await collection(core.db, users)
    .find(createdIn(range), { projection: { accountId: 1, createdAt: 1, lastSignInAt: 1 } })
    .toArray();
  const lastPost = new Map<string, Date>();
  if (signUps.length > 0) {
    const accountDocs = await collection(core.db, accounts)
      .find({ _id: { $in: signUps.map((u) => u.accountId) } }, { projection: { lastStatusAt: 1 } })
      .toArray();
    for (const a of accountDocs) if (a.lastStatusAt) lastPost.set(String(a._id), a.lastStatusAt);
  }
  const cohorts: Cohort[] = [];
  for (let p = periodStart(range.start, frequency); p < range.end; p = nextPeriod(p, frequency)) {
    const next = nextPeriod(p, frequency);
    const members = signUps.filter((u) => u.createdAt >= p && u.createdAt < next);
    const data: Cohort['data'] = [];
    for (let q = p; q < range.end; q = nextPeriod(q, frequency)) {
      const active = members.filter((u) => {
        const last = Math.max(u.lastSignInAt?.getTime() ?? 0, lastPost.get(String(u.accountId))?.getTime() ?? 0);
        return q.getTime() === p.getTime() || last >= q.getTime();
      }).length;
      data.push({
        date: q.toISOString(),
        rate: members.length === 0 ? 0 : active / members.length,
        value: String(active),
      });
    }
    cohorts.push({ period: p.toISOString(), frequency, data });
  }
  return cohorts;
}
