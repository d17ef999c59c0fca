// Server statistics for /api/v1/instance, /api/v2/instance and NodeInfo. Counting is a scan over
// accounts and users, so the result is cached in Redis for a few minutes: every client start asks.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { users } from '../model/users.ts';

export interface InstanceStats {
  userCount: number;
  statusCount: number;
  domainCount: number;
  activeMonth: number;
  activeHalfyear: number;
}

const CACHE_KEY = 'instance:stats';
const CACHE_SECONDS = 300;
const DAY_MS = 86_400_000;

export async function instanceStats(core: Core): Promise<InstanceStats> {
  const cached = await core.redis.get(CACHE_KEY);
  if (cached) return JSON.parse(cached) as InstanceStats;
  const stats = await countStats(core);
  await core.redis.set(CACHE_KEY, JSON.stringify(stats), 'EX', CACHE_SECONDS);
  return stats;
}

async function countStats(core: Core): Promise<InstanceStats> {
  const accountsColl = collection(core.db, accounts);
  const usersColl = collection(core.db, users);
  const now = Date.now();
  const [local] = await accountsColl
    .aggregate<{ statuses: number }>([
      { $match: { domain: null } },
      { $group: { _id: null, statuses: { $sum: '$statusesCount' } } },
    ])
    .toArray();
  const domains = await accountsColl
    .aggregate<{ _id: string }>([{ $match: { domain: { $ne: null } } }, { $group: { _id: '$domain', n: { $sum: 1 } } }])
    .toArray();
  const usable = { confirmedAt: { $ne: null }, approved: true, disabled: false };
  const [userCount, activeMonth, activeHalfyear] = await Promise.all([
    usersColl.countDocuments(usable),
    usersColl.countDocuments({ ...usable, lastSignInAt: { $gte: new Date(now - 30 * DAY_MS) } }),
    usersColl.countDocuments({ ...usable, lastSignInAt: { $gte: new Date(now - 180 * DAY_MS) } }),
  ]);
  return {
    userCount,
    statusCount: Number(local?.statuses ?? 0),
    domainCount: domains.length,
    activeMonth,
    activeHalfyear,
  };
}
