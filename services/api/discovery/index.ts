// Discovery area: follow suggestions (v1 and v2 with sources, dismissal), the profile directory and
// account search.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { dismissSuggestion, followSuggestions } from '../../core/discovery/suggestions.ts';
import { directory } from '../../core/discovery/directory.ts';
import { searchAccounts } from '../../core/discovery/accountSearch.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { BoolLike } from '../params.ts';
import { notFound } from '../errors.ts';
import { READ_ACCOUNTS as READ } from '../scopes.ts';

const LimitQuery = Type.Object(
  { limit: Type.Optional(Type.String({ maxLength: 30 })), offset: Type.Optional(Type.String({ maxLength: 30 })) },
  { additionalProperties: true },
);

function intParam(raw: string | undefined, fallback: number, max: number): number {
  const n = raw === undefined ? fallback : Math.trunc(Number(raw));
  if (!Number.isFinite(n) || n < 0) return fallback;
  return Math.min(n, max);
}

const discoveryArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/suggestions',
    { schema: { querystring: LimitQuery, response: { 200: Type.Array(AccountEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const found = await followSuggestions(core, account, intParam(request.query.limit, 40, 80));
      return presentAccounts(
        core,
        found.map((s) => s.account),
      );
    },
  );

  app.get(
    '/api/v2/suggestions',
    {
      schema: {
        querystring: LimitQuery,
        response: {
          200: Type.Array(
            Type.Object({ source: Type.String(), sources: Type.Array(Type.String()), account: AccountEntity }),
          ),
        },
      },
      config: { auth: READ },
    },
    async (request) => {
      const { account } = requireUser(request);
      const found = await followSuggestions(core, account, intParam(request.query.limit, 40, 80));
      const rendered = await presentAccounts(
        core,
        found.map((s) => s.account),
      );
      // `source` is the deprecated single value: "past_interactions" or "global" as Mastodon had it.
      return found.map((s, i) => ({
        source: s.sources.includes('friends_of_friends') ? 'past_interactions' : 'global',
        sources: s.sources,
        account: rendered[i]!,
      }));
    },
  );

  app.delete(
    '/api/v1/suggestions/:account_id',
    {
      schema: {
        params: Type.Object({ account_id: Type.String({ maxLength: 30 }) }),
        response: { 200: Type.Object({}) },
      },
      config: { auth: READ },
    },
    async (request) => {
      const { account } = requireUser(request);
      const id = parseId(request.params.account_id);
      if (id === null) throw notFound();
      await dismissSuggestion(core, account, id);
      return {};
    },
  );

  app.get(
    '/api/v1/directory',
    {
      schema: {
        querystring: Type.Object(
          {
            order: Type.Optional(Type.String({ maxLength: 20 })),
            local: Type.Optional(BoolLike),
            limit: Type.Optional(Type.String({ maxLength: 30 })),
            offset: Type.Optional(Type.String({ maxLength: 30 })),
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(AccountEntity) },
      },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'optional' } },
    },
    async (request) => {
      const q = request.query;
      const found = await directory(core, {
        order: q.order === 'new' ? 'new' : 'active',
        local: railsBoolean(q.local) === true,
        offset: intParam(q.offset, 0, 10_000),
        limit: intParam(q.limit, 40, 80),
      });
      return presentAccounts(core, found);
    },
  );

  app.get(
    '/api/v1/accounts/search',
    {
      schema: {
        querystring: Type.Object(
          {
            q: Type.Optional(Type.String({ maxLength: 500 })),
            limit: Type.Optional(Type.String({ maxLength: 30 })),
            offset: Type.Optional(Type.String({ maxLength: 30 })),
            resolve: Type.Optional(BoolLike),
            following: Type.Optional(BoolLike),
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(AccountEntity) },
      },
      config: { auth: READ },
    },
    async (request) => {
      const { account } = requireUser(request);
      const q = request.query;
      const found = await searchAccounts(core, account, {
        q: q.q ?? '',
        limit: intParam(q.limit, 40, 80),
        offset: intParam(q.offset, 0, 10_000),
        following: railsBoolean(q.following) === true,
      });
      return presentAccounts(core, found);
    },
  );
};

export default discoveryArea;
