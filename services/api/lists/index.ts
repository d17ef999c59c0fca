// Lists area: the caller's lists (create, read, update, delete), their members (paginated,
// `limit=0` for all; add/remove accounts the caller follows), and the caller's lists holding an
// account. Scopes: read:lists to read, write:lists to change (Authentication 3).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import type { ListDoc } from '../../core/model/lists.ts';
import { allListMemberIds, listMembersPage, listsContaining, listsOf } from '../../core/lists/queries.ts';
import {
  addListMembers,
  createList,
  deleteList,
  ownList,
  removeListMembers,
  updateList,
} from '../../core/lists/lists.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { findVisibleAccounts } from '../../core/accounts/queries.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { BoolLike, IdParams } from '../params.ts';
import { pageParams } from '../pagination.ts';
import { AccountIdParams, AccountPageQuery, accountsOfRecords, targetAccount } from '../graphParams.ts';
import { READ_LISTS as READ, WRITE_LISTS as WRITE } from '../scopes.ts';

const ListEntity = Type.Object({
  id: Type.String(),
  title: Type.String(),
  replies_policy: Type.String(),
  exclusive: Type.Boolean(),
});

const ListBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 10_000 })),
    replies_policy: Type.Optional(Type.String({ maxLength: 50 })),
    exclusive: Type.Optional(BoolLike),
  },
  { additionalProperties: true },
);

const MembersBody = Type.Object(
  {
    account_ids: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 30 }), { maxItems: 1000 }), Type.String({ maxLength: 30 })]),
    ),
  },
  { additionalProperties: true },
);

function presentList(list: ListDoc): Static<typeof ListEntity> {
  return { id: String(list._id), title: list.title, replies_policy: list.repliesPolicy, exclusive: list.exclusive };
}

function inputOf(body: Static<typeof ListBody> | undefined) {
  const exclusive = railsBoolean(body?.exclusive);
  return {
    title: body?.title,
    repliesPolicy: body?.replies_policy,
    exclusive: exclusive === null || exclusive === undefined ? undefined : exclusive,
  };
}

function idsOf(raw: string | string[] | undefined): bigint[] {
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(parseId).filter((id) => id !== null);
}

const listsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/lists',
    { schema: { response: { 200: Type.Array(ListEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return (await listsOf(core, account._id)).map(presentList);
    },
  );

  app.post(
    '/api/v1/lists',
    { schema: { body: Type.Optional(ListBody), response: { 200: ListEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      return presentList(await createList(core, account, inputOf(request.body)));
    },
  );

  app.get(
    '/api/v1/lists/:id',
    { schema: { params: IdParams, response: { 200: ListEntity } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return presentList(await ownList(core, account, parseId(request.params.id)));
    },
  );

  app.put(
    '/api/v1/lists/:id',
    {
      schema: { params: IdParams, body: Type.Optional(ListBody), response: { 200: ListEntity } },
      config: { auth: WRITE },
    },
    async (request) => {
      const { account } = requireUser(request);
      const list = await ownList(core, account, parseId(request.params.id));
      return presentList(await updateList(core, list, inputOf(request.body)));
    },
  );

  app.delete(
    '/api/v1/lists/:id',
    { schema: { params: IdParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await deleteList(core, await ownList(core, account, parseId(request.params.id)));
      return {};
    },
  );

  app.get(
    '/api/v1/lists/:id/accounts',
    {
      schema: { params: IdParams, querystring: AccountPageQuery, response: { 200: Type.Array(AccountEntity) } },
      config: { auth: READ },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const list = await ownList(core, account, parseId(request.params.id));
      if (request.query.limit === '0') {
        return presentAccounts(core, await findVisibleAccounts(core, await allListMemberIds(core, list)));
      }
      const page = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const records = await listMembersPage(core, list, page);
      const rows = await accountsOfRecords(core, request, reply, records, (r) => r.accountId, page);
      return presentAccounts(
        core,
        rows.map((r) => r.account),
      );
    },
  );

  for (const [method, operation] of [
    ['POST', addListMembers],
    ['DELETE', removeListMembers],
  ] as const) {
    app.route({
      method,
      url: '/api/v1/lists/:id/accounts',
      schema: {
        params: IdParams,
        body: Type.Optional(MembersBody),
        querystring: MembersBody,
        response: { 200: Type.Object({}) },
      },
      config: { auth: WRITE },
      handler: async (request) => {
        const { account } = requireUser(request);
        const list = await ownList(core, account, parseId(request.params.id));
        await operation(core, list, idsOf(request.body?.account_ids ?? request.query.account_ids));
        return {};
      },
    });
  }

  app.get(
    '/api/v1/accounts/:id/lists',
    { schema: { params: AccountIdParams, response: { 200: Type.Array(ListEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const target = await targetAccount(core, request.params.id);
      return (await listsContaining(core, account._id, target._id)).map(presentList);
    },
  );
};

export default listsArea;
