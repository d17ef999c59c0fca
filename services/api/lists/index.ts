// Lists area: the caller's lists (create, read, update, delete), their members (paginated,
// `limit=0` for all; add/remove accounts the caller follows), and the caller's lists holding an
// account. Scopes: read:lists to read, write:lists to change (Authentication 3).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { collection } from '../../core/db/mongo.ts';
import { parseId } from '../../core/ids.ts';
import { listMembers, lists, type ListDoc } from '../../core/model/lists.ts';
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
import { findPage, pageParams } from '../pagination.ts';
import { AccountIdParams, AccountPageQuery, accountsOfRecords, targetAccount } from '../graphParams.ts';

const READ = { scopes: ['read', 'read:lists'], user: 'required' as const };
const WRITE = { scopes: ['write', 'write:lists'], user: 'required' as const };

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
      const all = await collection(core.db, lists).find({ accountId: account._id }).sort({ _id: 1 }).toArray();
      return all.map(presentList);
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
        const all = await collection(core.db, listMembers).find({ listId: list._id }).sort({ _id: -1 }).toArray();
        return presentAccounts(
          core,
          await findVisibleAccounts(
            core,
            all.map((m) => m.accountId),
          ),
        );
      }
      const page = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
      const records = await findPage(collection(core.db, listMembers), { listId: list._id }, page);
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
      const memberships = await collection(core.db, listMembers)
        .find({ ownerId: account._id, accountId: target._id })
        .toArray();
      if (memberships.length === 0) return [];
      const found = await collection(core.db, lists)
        .find({ _id: { $in: memberships.map((m) => m.listId) }, accountId: account._id })
        .sort({ _id: 1 })
        .toArray();
      return found.map(presentList);
    },
  );
};

export default listsArea;
