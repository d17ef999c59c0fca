// Quote posts (Mastodon 4.5): who quoted a status (its author only), and the author revoking a quote.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Core } from '../../core/context.ts';
import { quotesOfStatus } from '../../core/statuses/reads.ts';
import { filterVisible } from '../../core/statuses/visibility.ts';
import { revokeQuote } from '../../core/quotes/quotes.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatus, presentStatuses } from '../../core/entities/statusRender.ts';
import { requireUser } from '../plugins/auth.ts';
import { ApiError } from '../errors.ts';
import { pageParams, setRecordPageLinks } from '../pagination.ts';
import { IdParams, PageQuery, QuoteParams } from './schemas.ts';
import { idParam, viewerOf, visibleStatusOr404 } from './helpers.ts';
import { READ_STATUSES_PUBLIC as READ, WRITE_STATUSES as WRITE } from '../scopes.ts';

export function registerQuoteRoutes(fastify: FastifyInstance, core: Core): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/v1/statuses/:id/quotes',
    {
      config: { auth: READ },
      schema: { params: IdParams, querystring: PageQuery, response: { 200: Type.Array(StatusEntity) } },
    },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const status = await visibleStatusOr404(core, viewer, request.params.id);
      // Mastodon 4.5 shows who quoted a post to its author only.
      if (!viewer || viewer._id !== status.accountId) throw new ApiError(403, 'This action is not allowed');
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await quotesOfStatus(core, status._id, p);
      setRecordPageLinks(core, request, reply, page, p.limit);
      return presentStatuses(core, await filterVisible(core, viewer, page), viewer);
    },
  );

  app.post(
    '/api/v1/statuses/:id/quotes/:quoting_status_id/revoke',
    { config: { auth: WRITE }, schema: { params: QuoteParams, response: { 200: StatusEntity } } },
    async (request) => {
      const { account } = requireUser(request);
      const status = await visibleStatusOr404(core, account, request.params.id);
      const quoting = await revokeQuote(core, account, status._id, idParam(request.params.quoting_status_id));
      return presentStatus(core, quoting, account);
    },
  );
}
