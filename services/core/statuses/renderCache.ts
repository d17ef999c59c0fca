// Keys of the rendered-status cache (services/core/entities/statusPage.ts) and its invalidation,
// kept apart so that writers (edits, deletes, media processing, role changes) can drop entries
// without importing the presenters.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';

export const renderedStatusKey = (id: Id) => `render:status:${id}`;
export const renderedRoleKey = (accountId: Id) => `render:role:${accountId}`;
/** Set while an account is known to have no custom filters (most have none). */
export const noFiltersKey = (accountId: Id) => `render:nofilters:${accountId}`;

/** Drops cached renderings of statuses (edits, deletes, changes to their media). */
export async function invalidateRenderedStatuses(core: Core, ids: Id[]): Promise<void> {
  if (ids.length > 0) await core.redis.del(...ids.map(renderedStatusKey));
}

/** Drops the cached role of an account (role changes). */
export async function invalidateRenderedRole(core: Core, accountId: Id): Promise<void> {
  await core.redis.del(renderedRoleKey(accountId));
}

/** Filters changed (created, edited, deleted): the "no filters" mark goes. */
export async function invalidateNoFilters(core: Core, accountId: Id): Promise<void> {
  await core.redis.del(noFiltersKey(accountId));
}
