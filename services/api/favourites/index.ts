// GET /api/v1/favourites: the caller's favourited statuses, newest favourite first (Link header).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { registerMarkedStatusesRoute } from '../statuses/markedStatusesRoute.ts';

const favouritesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  registerMarkedStatusesRoute(app, core, {
    path: '/api/v1/favourites',
    marks: 'favourites',
    scopes: ['read', 'read:favourites'],
  });
};

export default favouritesArea;
