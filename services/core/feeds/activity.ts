// Who gets fan-out (Mastodon's User::ACTIVE_DURATION, `USER_ACTIVE_DAYS`): only users active within
// the window have their home feeds written. Activity is a Redis marker per account, refreshed by
// their API use and open streaming connections (at most hourly per process) and expiring with the
// window, so the fan-out tells active local followers from inactive and remote ones with one MGET
// of their markers, with no database read. A user who comes back after the window finds the
// marker `stale` and gets a rebuilt home feed on the next read (Mastodon's regeneration on a
// returning sign-in); a missing marker (never seen, or Redis lost it) is treated the same way, so
// correctness never rests on Redis.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { batch } from '../db/redis.ts';
import { users } from '../model/users.ts';
import { feedKey, reblogsKey } from './feeds.ts';
import { TtlCache } from '../cache/ttlCache.ts';

/** `ok`: the feed has been kept since the marker was set; `stale`: it must be rebuilt before use. */
export type ActivityState = 'ok' | 'stale';

/**
 * `feed:active:{<id>}`: in the slot of the account's home feed (a cluster's fan-out checks both in
 * one script). Renamed from `feed:active:<id>` together with the feeds: after the change every
 * marker is missing, so fan-out skips everyone until they come back, and their next read rebuilds
 * the feed from MongoDB (a new empty feed is never trusted without an `ok` marker). The old keys
 * are dropped once by db/keyMigration.ts.
 */
export function activeKey(accountId: Id | string): string {
  return `feed:active:{${accountId}}`;
}

const DAY_SECONDS = 24 * 3600;

/** The marker lives for the window; the feed itself a day longer, then Redis frees it. */
export function activeWindowSeconds(core: Core): number {
  return core.config.userActiveDays * DAY_SECONDS;
}

export function feedTtlSeconds(core: Core): number {
  return activeWindowSeconds(core) + DAY_SECONDS;
}

/** Mastodon updates the sign-in time at most this often (UserTrackingConcern). */
const SIGN_IN_UPDATE_MS = DAY_SECONDS * 1000;
/** Each process refreshes one account's marker at most this often (it lasts days). */
const REFRESH_MS = 3_600_000;
const REFRESH_MEMORY_MAX = 100_000;
/** Per Redis namespace (tests run several cores in one process). */
const refreshed = new Map<string, TtlCache<string, true>>();

/**
 * Marks accounts as fed from now on. `ok` for accounts whose feed is known to be current (a new
 * account has nothing to rebuild); the default keeps an existing marker's state and sets a new one
 * `stale`. Either way the marker's and the feed's time to live start again.
 */
export async function markActive(core: Core, accountIds: Id[], state?: ActivityState): Promise<void> {
  if (accountIds.length === 0) return;
  const window = activeWindowSeconds(core);
  const pipe = batch(core.redis);
  for (const id of accountIds) {
    const key = activeKey(id);
    if (state) pipe.set(key, state, 'EX', window);
    else pipe.set(key, 'stale', 'EX', window, 'NX').expire(key, window);
    const feed = feedKey('home', id);
    pipe.expire(feed, feedTtlSeconds(core)).expire(reblogsKey(feed), feedTtlSeconds(core));
  }
  await pipe.exec();
}

/**
 * Records that a signed-in user used the API: refreshes the activity marker (hourly per process)
 * and the user's sign-in time (daily, as Mastodon, not awaited). Cheap enough for every request.
 */
export async function recordActivity(
  core: Core,
  user: { _id: Id; accountId: Id; lastSignInAt: Date | null },
): Promise<void> {
  const now = Date.now();
  let seen = refreshed.get(core.config.redisNamespace);
  if (!seen) refreshed.set(core.config.redisNamespace, (seen = new TtlCache(REFRESH_MS, REFRESH_MEMORY_MAX)));
  const id = String(user.accountId);
  if (seen.get(id, now)) return;
  seen.set(id, true, now);
  // The sign-in time is bookkeeping: it must not slow or fail the request.
  if (user.lastSignInAt === null || now - user.lastSignInAt.getTime() > SIGN_IN_UPDATE_MS)
    void collection(core.db, users)
      .updateOne({ _id: user._id }, { $set: { lastSignInAt: new Date(now) } })
      .catch(() => undefined);
  // The marker is what the fan-out reads: awaited, and tried again by the next request if it failed.
  await markActive(core, [user.accountId]).catch((err: unknown) => {
    seen.delete(id);
    throw err;
  });
}

/** Forgets this process's refresh times (tests that expire markers by hand). */
export function forgetActivityRefreshes(): void {
  refreshed.clear();
}
