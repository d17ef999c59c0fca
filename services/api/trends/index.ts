// Trends area: trending hashtags, statuses and links (GET /api/v1/trends[/tags|/statuses|/links]),
// reviewed items only, the caller's language first, `offset` pagination with Link headers.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import { trendingItems } from '../../core/trends/queries.ts';
import type { TrendKind } from '../../core/model/trends.ts';
import { TagEntity } from '../../core/entities/tag.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { TrendsLinkEntity } from '../../core/entities/previewCard.ts';
import { presentTrendingLinks, presentTrendingStatuses, presentTrendingTags } from './present.ts';
import { OffsetPageQuery, offsetPageHandler, type OffsetPage } from './offsetPage.ts';
import { READ_PUBLIC as PUBLIC } from '../scopes.ts';

function languagesOf(request: FastifyRequest): string[] {
  const locale = request.auth?.user?.locale;
  return locale ? [locale.split(/[-_]/)[0]!.toLowerCase()] : [];
}

const trendsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const items = (kind: TrendKind) => (request: FastifyRequest, page: OffsetPage) =>
    trendingItems(core, kind, { ...page, languages: languagesOf(request) });
  const config = { auth: PUBLIC };

  for (const path of ['/api/v1/trends', '/api/v1/trends/tags']) {
    app.get(
      path,
      { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(TagEntity) } }, config },
      offsetPageHandler(core, [10, 20], items('tag'), (found) => presentTrendingTags(core, found)),
    );
  }

  app.get(
    '/api/v1/trends/statuses',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(StatusEntity) } }, config },
    offsetPageHandler(core, [20, 40], items('status'), (found, request) =>
      presentTrendingStatuses(core, found, request.auth?.account ?? null),
    ),
  );

  app.get(
    '/api/v1/trends/links',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(TrendsLinkEntity) } }, config },
    offsetPageHandler(core, [10, 20], items('link'), (found) => presentTrendingLinks(core, found)),
  );
};

export default trendsArea;
