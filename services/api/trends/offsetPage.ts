// Mastodon's `offset` pagination of trend lists (public and admin): the query, the page it asks
// for, its Link headers, and a list route's handler built from what it loads and presents.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';

/** `limit` and `offset` (other parameters allowed and ignored). */
export const OffsetPageQuery = Type.Object(
  { limit: Type.Optional(Type.String({ maxLength: 30 })), offset: Type.Optional(Type.String({ maxLength: 30 })) },
  { additionalProperties: true },
);

export interface OffsetPage {
  limit: number;
  offset: number;
}

export function pageOf(query: { limit?: string; offset?: string }, defaultLimit: number, maxLimit: number): OffsetPage {
  const num = (raw: string | undefined, fallback: number) => {
    const n = raw === undefined ? fallback : Math.trunc(Number(raw));
    return Number.isFinite(n) && n >= 0 ? n : fallback;
  };
  return { limit: Math.max(1, Math.min(num(query.limit, defaultLimit), maxLimit)), offset: num(query.offset, 0) };
}

/** Link headers for offset pagination, as Mastodon's trends controllers send them. */
export function setOffsetLinks(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  page: OffsetPage,
  count: number,
): void {
  const [path, qs = ''] = request.url.split('?');
  const link = (offset: number) => {
    const params = new URLSearchParams(qs);
    params.set('offset', String(offset));
    params.set('limit', String(page.limit));
    return `<${core.config.baseUrl}${path}?${params.toString()}>`;
  };
  const parts: string[] = [];
  if (count >= page.limit) parts.push(`${link(page.offset + page.limit)}; rel="next"`);
  if (page.offset > 0) parts.push(`${link(Math.max(0, page.offset - page.limit))}; rel="prev"`);
  if (parts.length > 0) reply.header('link', parts.join(', '));
}

/**
 * The handler of an offset-paged list: the page the query asks for (`limits`: default and
 * maximum), what `load` finds for it, the Link headers, and what `present` makes of it.
 */
export function offsetPageHandler<T, R>(
  core: Core,
  limits: [defaultLimit: number, maxLimit: number],
  load: (request: FastifyRequest, page: OffsetPage) => Promise<readonly T[]>,
  present: (found: readonly T[], request: FastifyRequest) => Promise<R> | R,
) {
  return async (request: FastifyRequest<{ Querystring: { limit?: string; offset?: string } }>, reply: FastifyReply) => {
    const page = pageOf(request.query, ...limits);
    const found = await load(request, page);
    setOffsetLinks(core, request, reply, page, found.length);
    return present(found, request);
  };
}
