// GET /api/v1/bookmarks: the caller's bookmarked statuses, newest bookmark first, paginated by
// the bookmark records' ids (Link header).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AreaOptions } from '../areas.ts';
import { collection } from '../../core/db/mongo.ts';
import { bookmarks } from '../../core/model/bookmarks.ts';
import { statuses } from '../../core/model/statuses.ts';
import { requireUser } from '../plugins/auth.ts';
import { StatusEntity, presentStatuses } from '../entities/status.ts';
import { findPage, pageParams, setLinkHeader } from '../pagination.ts';
import { PageQuery } from '../statuses/schemas.ts';

const bookmarksArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/bookmarks',
    {
      config: { auth: { scopes: ['read', 'read:bookmarks'], user: 'required' } },
      schema: { querystring: PageQuery, response: { 200: Type.Array(StatusEntity) } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await findPage(collection(core.db, bookmarks), { accountId: account._id }, p);
      setLinkHeader(core, request, reply, {
        oldest: page.at(-1)?._id ?? null,
        newest: page[0]?._id ?? null,
        count: page.length,
        limit: p.limit,
      });
      const found = await collection(core.db, statuses)
        .find({ _id: { $in: page.map((f) => f.statusId) }, deletedAt: null })
        .toArray();
      const byId = new Map(found.map((s) => [s._id, s]));
      return presentStatuses(
        core,
        page.map((f) => byId.get(f.statusId)).filter((s) => s !== undefined),
        account,
      );
    },
  );
};

export default bookmarksArea;
