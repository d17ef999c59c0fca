// The caller's favourited or bookmarked statuses (GET /api/v1/favourites, /api/v1/bookmarks): newest
// mark first, paginated by the mark records' ids with a Link header, deleted statuses left out.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Core } from '../../core/context.ts';
import { findLiveStatuses, marksOfAccount, type MarkKind } from '../../core/statuses/reads.ts';
import { requireUser } from '../plugins/auth.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { pageParams, setRecordPageLinks } from '../pagination.ts';
import { PageQuery } from './schemas.ts';

export function registerMarkedStatusesRoute(
  app: FastifyInstance,
  core: Core,
  opts: { path: string; marks: MarkKind; scopes: string[] },
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
      const page = await marksOfAccount(core, opts.marks, account._id, p);
      setRecordPageLinks(core, request, reply, page, p.limit, 'min_id');
      return presentStatuses(
        core,
        await findLiveStatuses(
          core,
          page.map((m) => m.statusId),
        ),
        account,
      );
    },
  );
}
