// Writes of custom filters and the `filters_changed` streaming event (published once per
// changing request by the API routes, on timeline:<accountId> as Mastodon does, without payload).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { channelName, timelineChannels } from '../streaming/channels.ts';
import { validationFailed } from '../errors.ts';
import { invalidateNoFilters } from '../statuses/renderCache.ts';
import { FILTER_CONTEXTS, type FilterAction, type FilterContext } from '../model/filters.ts';

export async function publishFiltersChanged(core: Core, accountId: Id): Promise<void> {
  await invalidateNoFilters(core, accountId);
  await core.redis.publish(
    channelName(core.config, timelineChannels.user(accountId)),
    JSON.stringify({ event: 'filters_changed' }),
  );
}

export function parseContexts(raw: unknown): FilterContext[] {
  const list = raw === undefined || raw === null || raw === '' ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) throw validationFailed("Context can't be blank");
  if (!list.every((c) => typeof c === 'string' && FILTER_CONTEXTS.includes(c as FilterContext)))
    throw validationFailed('Context None or invalid context supplied');
  return [...new Set(list as FilterContext[])];
}

export function parseAction(raw: unknown, fallback: FilterAction): FilterAction {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (raw === 'warn' || raw === 'hide' || raw === 'blur') return raw;
  throw validationFailed('Filter action is not included in the list');
}

/** `expires_in` seconds → the expiry; absent/empty/null → never. */
export function parseExpiresIn(raw: unknown): Date | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 100 * 365 * 86_400)
    throw validationFailed('Expires in is not a valid duration');
  return new Date(Date.now() + Math.trunc(n) * 1000);
}

export function parseBool(raw: unknown, fallback: boolean): boolean {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (raw === true || raw === false) return raw;
  const s = String(raw).toLowerCase();
  return !['false', '0', 'f', 'off', 'no'].includes(s);
}

export interface KeywordAttribute {
  id?: unknown;
  keyword?: unknown;
  whole_word?: unknown;
  _destroy?: unknown;
}

/** `keywords_attributes` as an array, also from Rails' indexed hash form. */
export function keywordAttributes(raw: unknown): KeywordAttribute[] {
  if (raw === undefined || raw === null || raw === '') return [];
  const list = Array.isArray(raw) ? raw : typeof raw === 'object' ? Object.values(raw as object) : null;
  if (
    list === null ||
    list.length > 200 ||
    !list.every((k) => typeof k === 'object' && k !== null && !Array.isArray(k))
  )
    throw validationFailed('Keywords is invalid');
  return list as KeywordAttribute[];
}

export function keywordText(raw: unknown): string {
  if (typeof raw !== 'string' && typeof raw !== 'number') throw validationFailed("Keyword can't be blank");
  const s = String(raw).trim();
  if (s === '') throw validationFailed("Keyword can't be blank");
  if (s.length > 512) throw validationFailed('Keyword is too long');
  return s;
}
