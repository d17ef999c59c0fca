// Follows area: follow/unfollow (also POST /api/v1/follows), follow requests, removing a follower,
// followers/following of an account and familiar followers.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { follows } from '../../core/model/follows.ts';
import { followRequests } from '../../core/model/followRequests.ts';
import { findAccountByAcct, findVisibleAccounts } from '../../core/accounts/queries.ts';
import { followAccount, type FollowOptions } from '../../core/graph/follow.ts';
import { removeFromFollowers, unfollowAccount } from '../../core/graph/unfollow.ts';
import { authorizeFollowRequest, rejectFollowRequest } from '../../core/graph/followRequests.ts';
import { collectionsVisible, hiddenFrom } from '../../core/graph/collections.ts';
import { familiarFollowerIds } from '../../core/graph/relations.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { presentRelationship, RelationshipEntity } from '../../core/entities/relationship.ts';
import { BoolLike } from '../params.ts';
import { ApiError, missingParam, notFound } from '../errors.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import {
  AccountIdParams,
  AccountPageQuery,
  accountActionRoute,
  actOnAccount,
  ownRecordsHandler,
  recordAccountsPage,
  targetAccount,
} from '../graphParams.ts';
import { WRITE_FOLLOWS as WRITE, READ_FOLLOWS, READ_ACCOUNTS_PUBLIC } from '../scopes.ts';

const FollowBody = Type.Object(
  {
    reblogs: Type.Optional(BoolLike),
    notify: Type.Optional(BoolLike),
    languages: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 10 }), { maxItems: 200 }), Type.Null()])),
  },
  { additionalProperties: true },
);

function followOptions(
  body: { reblogs?: unknown; notify?: unknown; languages?: string[] | null } | undefined,
): FollowOptions {
  const opts: FollowOptions = {};
  const reblogs = railsBoolean(body?.reblogs);
  const notify = railsBoolean(body?.notify);
  if (reblogs !== null && reblogs !== undefined) opts.reblogs = reblogs;
  if (notify !== null && notify !== undefined) opts.notify = notify;
  if (body && 'languages' in body) {
    const list = (body.languages ?? []).map((l) => l.trim().toLowerCase()).filter(Boolean);
    opts.languages = list.length > 0 ? [...new Set(list)] : null;
  }
  return opts;
}

const followsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/accounts/:id/follow',
    {
      schema: { params: AccountIdParams, body: Type.Optional(FollowBody), response: { 200: RelationshipEntity } },
      config: { auth: WRITE },
    },
    async (request, reply) =>
      actOnAccount(core, request, async (account, target) => {
        await enforceRateLimit(core, reply, RATE_LIMITS.follows, String(account._id));
        await followAccount(core, account, target, followOptions(request.body));
      }),
  );

  // Mastodon's remote-follow form of the API: `uri` names the account (acct or URL).
  app.post(
    '/api/v1/follows',
    {
      schema: {
        body: Type.Optional(
          Type.Object({ uri: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: true }),
        ),
        response: { 200: RelationshipEntity },
      },
      config: { auth: WRITE },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const uri = request.body?.uri?.trim().replace(/^acct:/, '');
      if (!uri) throw missingParam('uri');
      const target = await findAccountByAcct(core, uri.replace(/^@/, ''));
      if (!target || target.pendingUser) throw notFound();
      await enforceRateLimit(core, reply, RATE_LIMITS.follows, String(account._id));
      await followAccount(core, account, target, followOptions(request.body as Record<string, unknown>));
      return presentRelationship(core, account, target);
    },
  );

  accountActionRoute(app, core, '/api/v1/accounts/:id/unfollow', WRITE, unfollowAccount);
  accountActionRoute(app, core, '/api/v1/accounts/:id/remove_from_followers', WRITE, removeFromFollowers);

  app.get(
    '/api/v1/follow_requests',
    {
      schema: { querystring: AccountPageQuery, response: { 200: Type.Array(AccountEntity) } },
      config: { auth: READ_FOLLOWS },
    },
    ownRecordsHandler(core, followRequests, 'targetAccountId', (r) => r.accountId),
  );

  // `:id` is the requester.
  accountActionRoute(app, core, '/api/v1/follow_requests/:id/authorize', WRITE, authorizeFollowRequest);
  accountActionRoute(app, core, '/api/v1/follow_requests/:id/reject', WRITE, rejectFollowRequest);

  for (const [path, ownField, otherField] of [
    ['/api/v1/accounts/:id/followers', 'targetAccountId', 'accountId'],
    ['/api/v1/accounts/:id/following', 'accountId', 'targetAccountId'],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          params: AccountIdParams,
          querystring: AccountPageQuery,
          response: { 200: Type.Array(AccountEntity) },
        },
        config: { auth: READ_ACCOUNTS_PUBLIC },
      },
      async (request, reply) => {
        const viewer = request.auth?.account ?? null;
        const owner = await targetAccount(core, request.params.id);
        if (!(await collectionsVisible(core, owner, viewer))) return [];
        return recordAccountsPage(
          core,
          request,
          reply,
          follows,
          { [ownField]: owner._id },
          (r) => r[otherField],
          (ids) => hiddenFrom(core, viewer, ids),
        );
      },
    );
  }

  app.get(
    '/api/v1/accounts/familiar_followers',
    {
      schema: {
        querystring: Type.Object(
          {
            id: Type.Optional(
              Type.Union([
                Type.Array(Type.String({ maxLength: 30 }), { maxItems: 1000 }),
                Type.String({ maxLength: 30 }),
              ]),
            ),
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(Type.Object({ id: Type.String(), accounts: Type.Array(AccountEntity) })) },
      },
      config: { auth: READ_FOLLOWS },
    },
    async (request) => {
      const { account } = requireUser(request);
      const raw = request.query.id ?? [];
      const ids = [...new Set((Array.isArray(raw) ? raw : [raw]).map(parseId).filter((id) => id !== null))];
      if (ids.length > 40) throw new ApiError(422, 'Validation failed: Too many ids (at most 40)');
      const targets = await findVisibleAccounts(core, ids);
      const familiar = await familiarFollowerIds(
        core,
        account._id,
        targets.map((t) => t._id),
      );
      return Promise.all(
        targets.map(async (target) => {
          const known = familiar.get(target._id) ?? [];
          const hide = await hiddenFrom(core, account, known);
          const visible = await findVisibleAccounts(
            core,
            known.filter((id) => !hide.has(id)),
          );
          return { id: String(target._id), accounts: await presentAccounts(core, visible) };
        }),
      );
    },
  );
};

export default followsArea;
