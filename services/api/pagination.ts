// Cursor pagination as Mastodon does it (reference conventions §7): `max_id` (older than),
// `since_id` (newest above), `min_id` (immediately above), `limit`; results newest first; a Link
// header with `next` (older, omitted when the page came back short) and `prev` (newer), omitted
// entirely when the page is empty.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core/context.ts';
import { parseId, type Id } from '../core/ids.ts';
import { findPage, type PageParams } from '../core/db/pages.ts';

// The page reads live in core (routes and core functions share them).
export { findPage, type PageParams };

export function pageParams(query: unknown, opts: { defaultLimit: number; maxLimit: number }): PageParams {
  const q = (query ?? {}) as Record<string, unknown>;
  const raw = q.limit;
  let limit = opts.defaultLimit;
  if (typeof raw === 'string' || typeof raw === 'number') {
    const n = Math.abs(Math.trunc(Number(raw)));
    if (Number.isFinite(n)) limit = Math.min(n, opts.maxLimit);
  }
  return { maxId: parseId(q.max_id), sinceId: parseId(q.since_id), minId: parseId(q.min_id), limit };
}

export interface LinkInfo {
  /** Cursor of the oldest item of the page (for `next`). */
  oldest: Id | null;
  /** Cursor of the newest item of the page (for `prev`). */
  newest: Id | null;
  /** Items that came back before any filtering of the page. */
  count: number;
  limit: number;
  /** Account lists use since_id for prev; timelines min_id. */
  prevParam?: 'min_id' | 'since_id';
}

export function linkHeader(core: Core, request: FastifyRequest, info: LinkInfo): string | null {
  if (info.count === 0 || info.oldest === null || info.newest === null) return null;
  const [path, qs = ''] = request.url.split('?');
  const base = new URLSearchParams(qs);
  for (const k of ['max_id', 'min_id', 'since_id']) base.delete(k);
  base.set('limit', String(info.limit));
  // The cursor goes last, as URLSearchParams#set appends a name it does not hold.
  const prefix = `<${core.config.baseUrl}${path}?${base.toString()}&`;
  const link = (param: string, id: Id) => `${prefix}${param}=${id}>`;
  const parts: string[] = [];
  if (info.count >= info.limit) parts.push(`${link('max_id', info.oldest)}; rel="next"`);
  parts.push(`${link(info.prevParam ?? 'min_id', info.newest)}; rel="prev"`);
  return parts.join(', ');
}

export function setLinkHeader(core: Core, request: FastifyRequest, reply: FastifyReply, info: LinkInfo): void {
  const value = linkHeader(core, request, info);
  if (value) reply.header('link', value);
}

/** The Link header of a page given the cursors of its items, newest first (timelines: min_id for prev). */
export function setCursorPageLinks(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  cursors: readonly Id[],
  limit: number,
  prevParam: 'min_id' | 'since_id' = 'min_id',
): void {
  setLinkHeader(core, request, reply, {
    oldest: cursors.at(-1) ?? null,
    newest: cursors[0] ?? null,
    count: cursors.length,
    limit,
    prevParam,
  });
}

/** The Link header of a page of records cursored by their own `_id`, newest first. */
export function setRecordPageLinks(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  page: readonly { _id: Id }[],
  limit: number,
  prevParam: 'min_id' | 'since_id' = 'since_id',
): void {
  setCursorPageLinks(
    core,
    request,
    reply,
    page.map((doc) => doc._id),
    limit,
    prevParam,
  );
}
