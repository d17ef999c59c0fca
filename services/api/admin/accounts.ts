// Admin accounts: the v1 and v2 lists with their filters, show, and the moderation actions
// (approve, reject, action, enable, unsilence, unsuspend, unsensitive, data deletion).
import { Type } from '@sinclair/typebox';
import { resetTwoFactorByAdmin } from '../../core/users/twoFactor.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { assertOutranks } from '../../core/moderation/outranks.ts';
import { approveUser, setDisabled } from '../../core/users/moderation.ts';
import {
  performAccountAction,
  setSensitized,
  setSilenced,
  unsuspendAccount,
  userOfAccount,
  reload,
} from '../../core/moderation/accountActions.ts';
import { adminAccountsPage, v1Filter, v2Filter } from '../../core/moderation/accountSearch.ts';
import { deleteAccountData, rejectPendingUser } from '../../core/moderation/accountRemoval.ts';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { BoolLike } from '../params.ts';
import { setRecordPageLinks } from '../pagination.ts';
import { adminConfig, adminPage, adminScopes, idParam, IdParams, moderator } from './guard.ts';
import { presentAdminAccount, presentAdminAccounts } from '../../core/entities/admin.ts';

const SCOPES = adminScopes('accounts');
const READ = adminConfig(SCOPES.read, 'manage_users');
const WRITE = adminConfig(SCOPES.write, 'manage_users');

const Str = Type.Optional(Type.String({ maxLength: 200 }));
/** The text filters both versions of the list take. */
const AccountSearch = { username: Str, display_name: Str, by_domain: Str, email: Str, ip: Str };
const V1Query = Type.Object(
  {
    local: Type.Optional(BoolLike),
    remote: Type.Optional(BoolLike),
    active: Type.Optional(BoolLike),
    pending: Type.Optional(BoolLike),
    disabled: Type.Optional(BoolLike),
    silenced: Type.Optional(BoolLike),
    suspended: Type.Optional(BoolLike),
    sensitized: Type.Optional(BoolLike),
    staff: Type.Optional(BoolLike),
    ...AccountSearch,
  },
  { additionalProperties: true },
);
const V2Query = Type.Object(
  {
    origin: Str,
    status: Str,
    permissions: Str,
    role_ids: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 30 }), { maxItems: 100 }), Type.String()])),
    invited_by: Str,
    ...AccountSearch,
  },
  { additionalProperties: true },
);

function targetOf(core: Core, raw: string): Promise<AccountDoc> {
  return reload(core, idParam(raw));
}

const ActionBody = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 30 })),
    report_id: Type.Optional(Type.Union([Type.String({ maxLength: 30 }), Type.Integer(), Type.Null()])),
    warning_preset_id: Type.Optional(Type.Union([Type.String({ maxLength: 30 }), Type.Integer(), Type.Null()])),
    text: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
    send_email_notification: Type.Optional(BoolLike),
  },
  { additionalProperties: true },
);

const adminAccountsRoutes: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const list = async (version: 'v1' | 'v2', request: FastifyRequest, reply: FastifyReply) => {
    const q = (request.query ?? {}) as Record<string, unknown>;
    const page = adminPage(q);
    const docs = await adminAccountsPage(core, version === 'v1' ? v1Filter(q) : v2Filter(q), page);
    setRecordPageLinks(core, request, reply, docs, page.limit, 'min_id');
    return presentAdminAccounts(core, docs);
  };
  app.get('/api/v1/admin/accounts', { schema: { querystring: V1Query }, config: READ }, (request, reply) =>
    list('v1', request, reply),
  );
  app.get('/api/v2/admin/accounts', { schema: { querystring: V2Query }, config: READ }, (request, reply) =>
    list('v2', request, reply),
  );

  app.get('/api/v1/admin/accounts/:id', { schema: { params: IdParams }, config: READ }, async (request) =>
    presentAdminAccount(core, await targetOf(core, request.params.id)),
  );

  app.post('/api/v1/admin/accounts/:id/approve', { schema: { params: IdParams }, config: WRITE }, async (request) => {
    const target = await targetOf(core, request.params.id);
    const user = await userOfAccount(core, target);
    if (!user || user.approved) throw forbidden();
    await approveUser(core, user, moderator(request).account._id);
    return presentAdminAccount(core, await targetOf(core, request.params.id));
  });

  app.post('/api/v1/admin/accounts/:id/reject', { schema: { params: IdParams }, config: WRITE }, async (request) => {
    const target = await targetOf(core, request.params.id);
    const rendered = await presentAdminAccount(core, target);
    await rejectPendingUser(core, target, moderator(request).account._id);
    return rendered;
  });

  app.delete(
    '/api/v1/admin/accounts/:id',
    { schema: { params: IdParams }, config: adminConfig(SCOPES.write, 'delete_user_data') },
    async (request) => {
      const target = await targetOf(core, request.params.id);
      await deleteAccountData(core, target, moderator(request).account._id);
      // The specification: admin deletes answer an empty object, not the deleted record.
      return {};
    },
  );

  app.post(
    '/api/v1/admin/accounts/:id/action',
    { schema: { params: IdParams, body: Type.Optional(ActionBody) }, config: WRITE },
    async (request) => {
      const me = moderator(request);
      const target = await targetOf(core, request.params.id);
      const body = request.body ?? {};
      if (body.type === undefined || body.type === '') throw validationFailed('Type is not included in the list');
      await assertOutranks(core, me.user, target);
      const reportId = body.report_id === undefined || body.report_id === null ? null : parseId(body.report_id);
      if (body.report_id !== undefined && body.report_id !== null && body.report_id !== '' && reportId === null)
        throw notFound();
      await performAccountAction(
        core,
        target,
        {
          type: body.type,
          reportId,
          text: body.text ?? '',
          sendEmailNotification: railsBoolean(body.send_email_notification) ?? true,
        },
        me.account._id,
      );
      return {};
    },
  );

  const simple = (
    path: string,
    operation: (core: Core, target: AccountDoc, actor: Id, user: UserDoc | null) => Promise<unknown>,
    config = WRITE,
  ) =>
    app.post(path, { schema: { params: IdParams }, config }, async (request) => {
      const me = moderator(request);
      const target = await targetOf(core, request.params.id);
      await assertOutranks(core, me.user, target);
      await operation(core, target, me.account._id, await userOfAccount(core, target));
      return presentAdminAccount(core, await targetOf(core, request.params.id));
    });

  simple('/api/v1/admin/accounts/:id/enable', async (c, _target, actor, user) => {
    if (user) await setDisabled(c, user, false, actor);
  });
  simple('/api/v1/admin/accounts/:id/unsilence', (c, target, actor) => setSilenced(c, target, false, actor));
  simple('/api/v1/admin/accounts/:id/unsuspend', (c, target, actor) => unsuspendAccount(c, target, actor));
  simple('/api/v1/admin/accounts/:id/unsensitive', (c, target, actor) => setSensitized(c, target, false, actor));
  // Mastodon has this on its admin pages only (Admin::TwoFactorAuthenticationsController, allowed by
  // UserPolicy#disable_2fa? to manage_user_access); here it is an admin API action like the ones
  // above, with the same permission as the page.
  simple(
    '/api/v1/admin/accounts/:id/disable_2fa',
    async (c, target, actor, user) => {
      if (!user) throw forbidden();
      await resetTwoFactorByAdmin(c, user, target.username, actor);
    },
    adminConfig(SCOPES.write, 'manage_user_access'),
  );
};

export default adminAccountsRoutes;
