// Relationships area: relationships with many accounts, private notes, endorsements (pin/unpin,
// the own list and another account's).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { endorsements } from '../../core/model/endorsements.ts';
import { relationshipTargets } from '../../core/accounts/queries.ts';
import { endorseAccount, unendorseAccount } from '../../core/graph/endorsements.ts';
import { setAccountNote } from '../../core/graph/notes.ts';
import { collectionsVisible } from '../../core/graph/collections.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity } from '../../core/entities/account.ts';
import { presentRelationships, RelationshipEntity } from '../../core/entities/relationship.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { BoolLike } from '../params.ts';
import {
  AccountIdParams,
  AccountPageQuery,
  accountActionRoute,
  actOnAccount,
  ownRecordsHandler,
  recordAccountsPage,
  targetAccount,
} from '../graphParams.ts';
import { READ_FOLLOWS, WRITE_ACCOUNTS, READ_ACCOUNTS, READ_ACCOUNTS_PUBLIC } from '../scopes.ts';

const IdsQuery = Type.Object(
  {
    id: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 30 }), { maxItems: 1000 }), Type.String({ maxLength: 30 })]),
    ),
    with_suspended: Type.Optional(BoolLike),
  },
  { additionalProperties: true },
);

const relationshipsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  for (const path of ['/api/v1/accounts/relationships', '/api/v1/relationships']) {
    app.get(
      path,
      {
        schema: { querystring: IdsQuery, response: { 200: Type.Array(RelationshipEntity) } },
        config: { auth: READ_FOLLOWS },
      },
      async (request) => {
        const { account } = requireUser(request);
        const raw = request.query.id ?? [];
        // Mastodon answers for the first 40 distinct ids and skips unknown ones.
        const ids = [...new Set((Array.isArray(raw) ? raw : [raw]).map(parseId).filter((id) => id !== null))].slice(
          0,
          40,
        );
        const withSuspended = railsBoolean(request.query.with_suspended) === true;
        const ordered = await relationshipTargets(core, ids, withSuspended);
        return presentRelationships(core, account, ordered);
      },
    );
  }

  app.post(
    '/api/v1/accounts/:id/note',
    {
      schema: {
        params: AccountIdParams,
        body: Type.Optional(
          Type.Object(
            { comment: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()])) },
            { additionalProperties: true },
          ),
        ),
        response: { 200: RelationshipEntity },
      },
      config: { auth: WRITE_ACCOUNTS },
    },
    async (request) =>
      actOnAccount(core, request, (account, target) =>
        setAccountNote(core, account, target, request.body?.comment ?? ''),
      ),
  );

  for (const path of ['/api/v1/accounts/:id/pin', '/api/v1/accounts/:id/endorse'])
    accountActionRoute(app, core, path, WRITE_ACCOUNTS, endorseAccount);
  for (const path of ['/api/v1/accounts/:id/unpin', '/api/v1/accounts/:id/unendorse'])
    accountActionRoute(app, core, path, WRITE_ACCOUNTS, unendorseAccount);

  app.get(
    '/api/v1/endorsements',
    {
      schema: { querystring: AccountPageQuery, response: { 200: Type.Array(AccountEntity) } },
      config: { auth: READ_ACCOUNTS },
    },
    ownRecordsHandler(core, endorsements, 'accountId', (r) => r.targetAccountId),
  );

  app.get(
    '/api/v1/accounts/:id/endorsements',
    {
      schema: { params: AccountIdParams, querystring: AccountPageQuery, response: { 200: Type.Array(AccountEntity) } },
      config: { auth: READ_ACCOUNTS_PUBLIC },
    },
    async (request, reply) => {
      const owner = await targetAccount(core, request.params.id);
      if (!(await collectionsVisible(core, owner, request.auth?.account ?? null))) return [];
      return recordAccountsPage(core, request, reply, endorsements, { accountId: owner._id }, (r) => r.targetAccountId);
    },
  );
};

export default relationshipsArea;
