// OAuth apps by id, kept in this process for a minute: apps are never changed after registration
// (Mastodon has no update), and every authenticated request and every status rendering names one,
// so each would otherwise be a MongoDB query.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { apps, type AppDoc } from '../model/oauth.ts';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';

const APP_TTL_MS = 60_000;
const APP_CACHE_MAX = 10_000;
/** Per database (ids are per database; tests run several in one process). */
const cacheOf = cachePerOwner(() => new TtlCache<bigint, AppDoc>(APP_TTL_MS, APP_CACHE_MAX));

/** The apps of `ids` that exist, from this process's copies, else one query. */
export async function findApps(core: Core, ids: readonly Id[]): Promise<Map<bigint, AppDoc>> {
  const cache = cacheOf(core.db);
  const now = Date.now();
  const out = new Map<bigint, AppDoc>();
  const missing: Id[] = [];
  for (const id of new Set(ids)) {
    const hit = cache.get(id, now);
    if (hit) out.set(id, hit);
    else missing.push(id);
  }
  if (missing.length === 0) return out;
  const found = await collection(core.db, apps)
    .find(missing.length === 1 ? { _id: missing[0] } : { _id: { $in: missing } })
    .toArray();
  for (const app of found) {
    cache.set(app._id, app, now);
    out.set(app._id, app);
  }
  return out;
}

/** One app by id (null: none). */
export async function findApp(core: Core, id: Id): Promise<AppDoc | null> {
  return (await findApps(core, [id])).get(id) ?? null;
}
