// Mastodon 4.4's experimental async refreshes: GET /api/v1_alpha/async_refreshes/:id answers
// whether background work a response announced (`Mastodon-Async-Refresh`) is still running, e.g.
// the crawl of a remote thread's replies started by opening its context.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { findAsyncRefresh } from '../../core/activitypub/replies/asyncRefresh.ts';
import { ApiError } from '../errors.ts';
import { READ } from '../scopes.ts';

const AsyncRefreshEntity = Type.Object({
  async_refresh: Type.Object({
    id: Type.String(),
    status: Type.String(),
    result_count: Type.Union([Type.Integer(), Type.Null()]),
  }),
});

const asyncRefreshesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1_alpha/async_refreshes/:id',
    {
      config: { auth: READ },
      schema: { params: Type.Object({ id: Type.String({ maxLength: 600 }) }), response: { 200: AsyncRefreshEntity } },
    },
    async (request) => {
      const refresh = await findAsyncRefresh(core, request.params.id);
      if (!refresh) throw new ApiError(404, 'Not Found');
      return { async_refresh: refresh };
    },
  );
};

export default asyncRefreshesArea;
