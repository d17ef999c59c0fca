// Search area: GET /api/v2/search (accounts, hashtags with history, statuses through the search
// index; core/search/). Authentication required, as the specification says.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { search, type SearchType } from '../../core/search/search.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatusPage } from '../../core/entities/statusRender.ts';
import { TagEntity } from '../../core/entities/tag.ts';
import { presentTagsWithHistory } from '../../core/entities/tagHistory.ts';
import { BoolLike } from '../params.ts';
import { missingParam } from '../errors.ts';

const TYPES: readonly SearchType[] = ['accounts', 'hashtags', 'statuses'];
const IdParam = Type.Optional(Type.String({ maxLength: 30 }));

function intParam(raw: string | undefined, fallback: number, max: number): number {
  const n = raw === undefined ? fallback : Math.trunc(Number(raw));
  if (!Number.isFinite(n) || n < 0) return fallback;
  return Math.min(n, max);
}

function optionalId(raw: string | undefined): Id | undefined {
  if (raw === undefined || raw === '') return undefined;
  return parseId(raw) ?? undefined;
}

const searchArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v2/search',
    {
      schema: {
        querystring: Type.Object(
          {
            q: Type.Optional(Type.String({ maxLength: 2000 })),
            type: Type.Optional(Type.String({ maxLength: 30 })),
            resolve: Type.Optional(BoolLike),
            following: Type.Optional(BoolLike),
            exclude_unreviewed: Type.Optional(BoolLike),
            account_id: IdParam,
            max_id: IdParam,
            min_id: IdParam,
            limit: Type.Optional(Type.String({ maxLength: 30 })),
            offset: Type.Optional(Type.String({ maxLength: 30 })),
          },
          { additionalProperties: true },
        ),
        response: {
          200: Type.Object({
            accounts: Type.Array(AccountEntity),
            statuses: Type.Array(StatusEntity),
            hashtags: Type.Array(TagEntity),
          }),
        },
      },
      config: { auth: { scopes: ['read', 'read:search'], user: 'required' } },
    },
    async (request) => {
      const { account } = requireUser(request);
      const q = request.query;
      if (q.q === undefined) throw missingParam('q');
      const type = TYPES.find((t) => t === q.type) ?? null;
      const found = await search(core, account, {
        q: q.q,
        type,
        resolve: railsBoolean(q.resolve) === true,
        following: railsBoolean(q.following) === true,
        excludeUnreviewed: railsBoolean(q.exclude_unreviewed) === true,
        accountId: optionalId(q.account_id),
        maxId: optionalId(q.max_id),
        minId: optionalId(q.min_id),
        limit: Math.max(1, intParam(q.limit, 20, 40)),
        offset: intParam(q.offset, 0, 10_000),
      });
      const [accounts, statuses, hashtags] = await Promise.all([
        presentAccounts(core, found.accounts, { viewerId: account?._id }),
        // Already checked against the caller's visibility: rendered through the cache.
        presentStatusPage(
          core,
          found.statuses.map((s) => s._id),
          account,
          { check: 'feed', docs: found.statuses },
        ),
        presentTagsWithHistory(core, found.hashtags),
      ]);
      return { accounts, statuses, hashtags };
    },
  );
};

export default searchArea;
