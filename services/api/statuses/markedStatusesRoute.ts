// The caller's favourited or bookmarked statuses (GET /api/v1/favourites, /api/v1/bookmarks): newest
// mark first, paginated by the mark records' ids with a Link header, deleted statuses left out.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Core } from '../../core/context.ts';
import type { Id } from '../../core/ids.ts';
import { collection, type CollectionDef } from '../../core/db/mongo.ts';
import { statuses } from '../../core/model/statuses.ts';
import { requireUser } from '../plugins/auth.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { findPage, pageParams, setRecordPageLinks } from '../pagination.ts';
import { PageQuery } from './schemas.ts';

interface MarkDoc {
  _id: Id;
  accountId: Id;
  statusId: Id;
}

export function registerMarkedStatusesRoute(
  app: FastifyInstance,
  core: Core,
  opts: { path: string; marks: CollectionDef<MarkDoc>; scopes: string[] },
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    opts.path,
    {
      config: { auth: { scopes: opts.scopes, user: 'required' } },
      schema: { querystring: PageQuery, response: { 200: Type.Array(StatusEntity) } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await findPage(collection(core.db, opts.marks), { accountId: account._id }, p);
      setRecordPageLinks(core, request, reply, page, p.limit, 'min_id');
      const found = await collection(core.db, statuses)
        .find({ _id: { $in: page.map((m) => m.statusId) }, deletedAt: null })
        .toArray();
      const byId = new Map(found.map((s) => [s._id, s]));
      return presentStatuses(
        core,
        page.map((m) => byId.get(m.statusId)).filter((s) => s !== undefined),
        account,
      );
    },
  );
}
