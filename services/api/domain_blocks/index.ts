// Account domain blocks: GET (paginated list of domain strings), POST and DELETE `domain`.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { blockDomain, domainBlocksPage, unblockDomain } from '../../core/graph/domainBlocks.ts';
import { requireUser } from '../plugins/auth.ts';
import { setRecordPageLinks } from '../pagination.ts';
import { missingParam } from '../errors.ts';
import { AccountPageQuery, accountPage } from '../graphParams.ts';
import { WRITE_BLOCKS as WRITE, READ_BLOCKS as READ } from '../scopes.ts';

const DomainBody = Type.Object(
  { domain: Type.Optional(Type.String({ maxLength: 300 })) },
  { additionalProperties: true },
);

const domainBlocksArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/domain_blocks',
    { schema: { querystring: AccountPageQuery, response: { 200: Type.Array(Type.String()) } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const page = pageOf(request.query);
      const records = await domainBlocksPage(core, account._id, page);
      setRecordPageLinks(core, request, reply, records, page.limit);
      return records.map((r) => r.domain);
    },
  );

  for (const [method, operation] of [
    ['POST', blockDomain],
    ['DELETE', unblockDomain],
  ] as const) {
    app.route({
      method,
      url: '/api/v1/domain_blocks',
      schema: { body: Type.Optional(DomainBody), querystring: DomainBody, response: { 200: Type.Object({}) } },
      config: { auth: WRITE },
      handler: async (request) => {
        const { account } = requireUser(request);
        // DELETE bodies are not always sent: the query string works too.
        const domain = (request.body?.domain ?? request.query.domain ?? '').trim();
        if (!domain) throw missingParam('domain');
        await operation(core, account, domain);
        return {};
      },
    });
  }
};

function pageOf(query: unknown) {
  // Mastodon lists 100 domains by default, 200 at most.
  return { ...accountPage(query), ...limitOf(query) };
}

function limitOf(query: unknown): { limit: number } {
  const raw = (query as { limit?: string } | undefined)?.limit;
  const n = raw === undefined ? 100 : Math.abs(Math.trunc(Number(raw)));
  return { limit: Number.isFinite(n) ? Math.min(n, 200) : 100 };
}

export default domainBlocksArea;
