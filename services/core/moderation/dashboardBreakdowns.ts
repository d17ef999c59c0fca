// The admin dashboard's breakdowns (Mastodon's Admin::Metrics): dimensions (the top languages,
// servers, software, ... of a date range) and retention cohorts (how many of those who signed up
// in a period are still active later). Days are UTC, as the measures in dashboard.ts.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { users } from '../model/users.ts';
import { statuses } from '../model/statuses.ts';
import { mediaAttachments as media } from '../model/media.ts';
import { apps } from '../model/oauth.ts';
import { normalizeDomain } from './domainBlocks.ts';
import type { Id } from '../ids.ts';
import { DAY_MS, midnight, statusRange, createdIn, domainAccountIds, humanBytes, type DateRange } from './dashboard.ts';

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

/**
 * A dimension over statuses: their languages, or (`byLanguage` false) their authors under the key
 * `authorKeys` gives them (read only then: a server, a username).
 */
async function statusesBy(
  list: { accountId: Id; language: string | null }[],
  byLanguage: boolean,
  limit: number,
  authorKeys: () => Promise<Map<string, string>>,
): Promise<Dimension['data']> {
  if (byLanguage)
    return top(
      tally(list, (s) => s.language),
      limit,
    );
  const keys = await authorKeys();
  return top(
    tally(list, (s) => keys.get(String(s.accountId)) ?? null),
    limit,
  );
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
        const data = await statusesBy(list, key === 'tag_languages', limit, async () => {
          const found = await collection(db, accounts)
            .find({ _id: { $in: [...new Set(list.map((s) => s.accountId))] } }, { projection: { domain: 1 } })
            .toArray();
          return new Map(found.map((a) => [String(a._id), a.domain ?? core.config.localDomain]));
        });
        out.push({ key, data });
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
        const data = await statusesBy(list, key === 'instance_languages', limit, async () => {
          const found = await collection(db, accounts)
            .find({ _id: { $in: ids } }, { projection: { username: 1 } })
            .toArray();
          return new Map(found.map((a) => [String(a._id), a.username]));
        });
        out.push({ key, data });
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
