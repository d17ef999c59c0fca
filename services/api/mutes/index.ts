// Mutes area: mute (with `notifications` and `duration`) / unmute, and the paginated list of muted
// accounts with `mute_expires_at`.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { muteAccount, mutesPage, unmuteAccount } from '../../core/graph/mute.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { requireUser } from '../plugins/auth.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { RelationshipEntity } from '../../core/entities/relationship.ts';
import { BoolLike } from '../params.ts';
import { validationFailed } from '../errors.ts';
import {
  AccountIdParams,
  AccountPageQuery,
  accountActionRoute,
  accountPage,
  accountsOfRecords,
  actOnAccount,
} from '../graphParams.ts';
import { WRITE_MUTES as WRITE, READ_MUTES as READ } from '../scopes.ts';

const MuteBody = Type.Object(
  {
    notifications: Type.Optional(BoolLike),
    duration: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ maxLength: 20 }), Type.Null()])),
  },
  { additionalProperties: true },
);

/** Seconds; 0, empty or absent: forever. */
function durationOf(value: number | string | null | undefined): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 100 * 365 * 86_400)
    throw validationFailed('Duration is not a valid number of seconds');
  return n;
}

const MutedAccountEntity = Type.Intersect([
  AccountEntity,
  Type.Object({ mute_expires_at: Type.Union([Type.String(), Type.Null()]) }),
]);

const mutesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/accounts/:id/mute',
    {
      schema: { params: AccountIdParams, body: Type.Optional(MuteBody), response: { 200: RelationshipEntity } },
      config: { auth: WRITE },
    },
    async (request) =>
      actOnAccount(core, request, (account, target) =>
        muteAccount(core, account, target, {
          notifications: railsBoolean(request.body?.notifications) ?? true,
          durationSeconds: durationOf(request.body?.duration),
        }),
      ),
  );

  accountActionRoute(app, core, '/api/v1/accounts/:id/unmute', WRITE, unmuteAccount);

  app.get(
    '/api/v1/mutes',
    {
      schema: { querystring: AccountPageQuery, response: { 200: Type.Array(MutedAccountEntity) } },
      config: { auth: READ },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const page = accountPage(request.query);
      const records = await mutesPage(core, account._id, page);
      const rows = await accountsOfRecords(core, request, reply, records, (r) => r.targetAccountId, page);
      const presented = await presentAccounts(
        core,
        rows.map((r) => r.account),
      );
      return presented.map((a, i) => ({ ...a, mute_expires_at: rows[i]?.record.expiresAt?.toISOString() ?? null }));
    },
  );
};

export default mutesArea;
