// OAuth apps by id, kept in this process for a minute: apps are never changed after registration
// (Mastodon has no update), and every authenticated request and every status rendering names one,
// so each would otherwise be a MongoDB query.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { apps, type AppDoc } from '../model/oauth.ts';

const APP_TTL_MS = 60_000;
const APP_CACHE_MAX = 10_000;
/** Per database (ids are per database; tests run several in one process). */
const appCaches = new WeakMap<object, Map<bigint, { app: AppDoc; until: number }>>();

function cacheOf(core: Core): Map<bigint, { app: AppDoc; until: number }> {
  let cache = appCaches.get(core.db);
  if (!cache) appCaches.set(core.db, (cache = new Map()));
  return cache;
}

/** The apps of `ids` that exist, from this process's copies, else one query. */
export async function findApps(core: Core, ids: readonly Id[]): Promise<Map<bigint, AppDoc>> {
  const cache = cacheOf(core);
  const now = Date.now();
  const out = new Map<bigint, AppDoc>();
  const missing: Id[] = [];
  for (const id of new Set(ids)) {
    const hit = cache.get(id);
    if (hit && hit.until > now) out.set(id, hit.app);
    else missing.push(id);
  }
  if (missing.length === 0) return out;
  const found = await collection(core.db, apps)
    .find(missing.length === 1 ? { _id: missing[0] } : { _id: { $in: missing } })
    .toArray();
  if (cache.size + found.length > APP_CACHE_MAX) cache.clear();
  for (const app of found) {
    cache.set(app._id, { app, until: now + APP_TTL_MS });
    out.set(app._id, app);
  }
  for (const id of missing) if (!out.has(id)) cache.delete(id);
  return out;
}

/** One app by id (null: none). */
export async function findApp(core: Core, id: Id): Promise<AppDoc | null> {
  return (await findApps(core, [id])).get(id) ?? null;
}
