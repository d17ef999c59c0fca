// Keys of the rendered-status cache (services/core/entities/statusPage.ts) and its invalidation,
// kept apart so that writers (edits, deletes, media processing, role changes) can drop entries
// without importing the presenters.
import type { Core } from '../context.ts';
import { batch } from '../db/redis.ts';
import type { Id } from '../ids.ts';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';

export const renderedStatusKey = (id: Id) => `render:status:${id}`;
export const renderedRoleKey = (accountId: Id) => `render:role:${accountId}`;
/** Set while an account is known to have no custom filters (most have none). */
export const noFiltersKey = (accountId: Id) => `render:nofilters:${accountId}`;

/**
 * Each process also keeps the renderings it read for a few seconds (statusPage.ts): a page then
 * costs no Redis transfer or JSON parse of 20 renderings. An edit changes the version every read
 * checks, so only changes without an edit (media descriptions, preview cards) can show that much
 * later in other processes; this process forgets at once.
 */
export const LOCAL_RENDER_TTL_MS = 5000;
const LOCAL_MAX = 20_000;
/** Per database: the renderings this process read (statusShells.ts's CachedShell). */
export const localRenderings = new WeakMap<object, TtlCache<bigint, unknown>>();

export function localRenderingsOf(db: object): TtlCache<bigint, unknown> {
  let local = localRenderings.get(db);
  if (!local) localRenderings.set(db, (local = new TtlCache(LOCAL_RENDER_TTL_MS, LOCAL_MAX)));
  return local;
}

/**
 * Counts this process's drops (per database). A reader keeps what it read or rendered only if no
 * drop happened since it began: a render that read an emoji or status before the change, ending
 * after the drop, would otherwise keep the old rendering here for LOCAL_RENDER_TTL_MS.
 */
const dropCounts = new WeakMap<object, number>();
export const renderDropCount = (db: object): number => dropCounts.get(db) ?? 0;

/** The role ids behind rendered authors this process read (statusPage.ts), as long as renderings. */
export const localRoleIdsOf = cachePerOwner(() => new TtlCache<bigint, Id | null>(LOCAL_RENDER_TTL_MS, LOCAL_MAX));

/**
 * How long a dropped rendering stays dropped: a render that read the status before the change
 * (a slow request racing an edit, media processing or a quote's state change) would otherwise store
 * the old rendering after the drop, and a change that keeps `edited_at` would show for hours. The
 * tombstone is an empty value, which readers take as a miss and renderers do not overwrite.
 */
export const RENDER_TOMBSTONE_SECONDS = 5;

/** Drops cached renderings of statuses (edits, deletes, changes to their media). */
export async function invalidateRenderedStatuses(core: Core, ids: Id[]): Promise<void> {
  if (ids.length === 0) return;
  dropCounts.set(core.db, renderDropCount(core.db) + 1);
  const local = localRenderingsOf(core.db);
  for (const id of ids) local.delete(id);
  const tombstones = batch(core.redis);
  for (const id of ids) tombstones.set(renderedStatusKey(id), '', 'EX', RENDER_TOMBSTONE_SECONDS);
  await tombstones.exec();
}

/** Drops the cached role of an account (role changes). */
export async function invalidateRenderedRole(core: Core, accountId: Id): Promise<void> {
  localRoleIdsOf(core.db).delete(accountId);
  await core.redis.del(renderedRoleKey(accountId));
}

/** Filters changed (created, edited, deleted): the "no filters" mark goes. */
export async function invalidateNoFilters(core: Core, accountId: Id): Promise<void> {
  await core.redis.del(noFiltersKey(accountId));
}
