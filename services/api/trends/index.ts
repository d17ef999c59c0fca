// Trends area: trending hashtags, statuses and links (GET /api/v1/trends[/tags|/statuses|/links]),
// reviewed items only, the caller's language first, `offset` pagination with Link headers.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { trendingItems } from '../../core/trends/queries.ts';
import type { TrendKind } from '../../core/model/trends.ts';
import { TagEntity } from '../../core/entities/tag.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { TrendsLinkEntity } from '../../core/entities/previewCard.ts';
import { presentTrendingLinks, presentTrendingStatuses, presentTrendingTags } from './present.ts';

const PageQuery = Type.Object(
  { limit: Type.Optional(Type.String({ maxLength: 30 })), offset: Type.Optional(Type.String({ maxLength: 30 })) },
  { additionalProperties: true },
);
const PUBLIC = { scopes: ['read'], user: 'optional' as const };

export function pageOf(query: { limit?: string; offset?: string }, defaultLimit: number, maxLimit: number) {
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
  page: { limit: number; offset: number },
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

function languagesOf(request: FastifyRequest): string[] {
  const locale = request.auth?.user?.locale;
  return locale ? [locale.split(/[-_]/)[0]!.toLowerCase()] : [];
}

const trendsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const items = (request: FastifyRequest, kind: TrendKind, page: { limit: number; offset: number }) =>
    trendingItems(core, kind, { ...page, languages: languagesOf(request) });

  for (const path of ['/api/v1/trends', '/api/v1/trends/tags']) {
    app.get(
      path,
      { schema: { querystring: PageQuery, response: { 200: Type.Array(TagEntity) } }, config: { auth: PUBLIC } },
      async (request, reply) => {
        const page = pageOf(request.query, 10, 20);
        const found = await items(request, 'tag', page);
        setOffsetLinks(core, request, reply, page, found.length);
        return presentTrendingTags(core, found);
      },
    );
  }

  app.get(
    '/api/v1/trends/statuses',
    { schema: { querystring: PageQuery, response: { 200: Type.Array(StatusEntity) } }, config: { auth: PUBLIC } },
    async (request, reply) => {
      const page = pageOf(request.query, 20, 40);
      const found = await items(request, 'status', page);
      setOffsetLinks(core, request, reply, page, found.length);
      return presentTrendingStatuses(core, found, request.auth?.account ?? null);
    },
  );

  app.get(
    '/api/v1/trends/links',
    { schema: { querystring: PageQuery, response: { 200: Type.Array(TrendsLinkEntity) } }, config: { auth: PUBLIC } },
    async (request, reply) => {
      const page = pageOf(request.query, 10, 20);
      const found = await items(request, 'link', page);
      setOffsetLinks(core, request, reply, page, found.length);
      return presentTrendingLinks(core, found);
    },
  );
};

export default trendsArea;
