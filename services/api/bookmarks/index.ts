// GET /api/v1/bookmarks: the caller's bookmarked statuses, newest bookmark first (Link header).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { registerMarkedStatusesRoute } from '../statuses/markedStatusesRoute.ts';

const bookmarksArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  registerMarkedStatusesRoute(app, core, {
    path: '/api/v1/bookmarks',
    marks: 'bookmarks',
    scopes: ['read', 'read:bookmarks'],
  });
};

export default bookmarksArea;
