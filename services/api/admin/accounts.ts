// Admin accounts: the v1 and v2 lists with their filters, show, and the moderation actions
// (approve, reject, action, enable, unsilence, unsuspend, unsensitive, data deletion).
import { Type } from '@sinclair/typebox';
import { resetTwoFactorByAdmin } from '../../core/users/twoFactor.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Filter } from 'mongodb';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { collection } from '../../core/db/mongo.ts';
import { accounts, type AccountDoc } from '../../core/model/accounts.ts';
import { users, type UserDoc } from '../../core/model/users.ts';
import { roles } from '../../core/model/roles.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { DEFAULT_PERMISSIONS } from '../../core/roles/permissions.ts';
import { assertOutranks } from '../../core/moderation/outranks.ts';
import { approveUser, setDisabled } from '../../core/users/moderation.ts';
import {
  performAccountAction,
  setSensitized,
  setSilenced,
  unsuspendAccount,
  userOfAccount,
} from '../../core/moderation/accountActions.ts';
import { deleteAccountData, rejectPendingUser } from '../../core/moderation/accountRemoval.ts';
import { parseCidr, parseIp } from '../../core/moderation/ipBlocks.ts';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { BoolLike } from '../params.ts';
import { findPage, setRecordPageLinks } from '../pagination.ts';
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

export interface AccountFilterInput {
  origin?: 'local' | 'remote';
  status?: 'active' | 'pending' | 'disabled' | 'silenced' | 'suspended' | 'sensitized';
  staff?: boolean;
  roleIds?: Id[];
  invitedBy?: string;
  username?: string;
  displayName?: string;
  byDomain?: string;
  email?: string;
  ip?: string;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The MongoDB filter for Mastodon's AccountFilter. */
export async function accountFilter(core: Core, f: AccountFilterInput): Promise<Filter<AccountDoc>> {
  const and: Filter<AccountDoc>[] = [];
  if (f.origin === 'local') and.push({ domain: null });
  if (f.origin === 'remote') and.push({ domain: { $ne: null } });
  const userConditions: Filter<UserDoc>[] = [];
  switch (f.status) {
    case 'active':
      and.push({ suspendedAt: null });
      break;
    case 'silenced':
      and.push({ silencedAt: { $ne: null } });
      break;
    case 'suspended':
      and.push({ suspendedAt: { $ne: null } });
      break;
    case 'sensitized':
      and.push({ sensitizedAt: { $ne: null } });
      break;
    case 'pending':
      userConditions.push({ approved: false });
      break;
    case 'disabled':
      userConditions.push({ disabled: true });
      break;
  }
  if (f.username) and.push({ usernameLower: { $regex: `^${escapeRegex(f.username.toLowerCase())}` } });
  if (f.displayName) and.push({ displayName: { $regex: escapeRegex(f.displayName), $options: 'i' } });
  if (f.byDomain) and.push({ domain: { $regex: `^${escapeRegex(f.byDomain.toLowerCase())}` } });
  if (f.email) userConditions.push({ emailLower: { $regex: escapeRegex(f.email.toLowerCase()) } });
  if (f.staff || f.roleIds) {
    const roleDocs = await collection(core.db, roles).find({}).toArray();
    let ids = roleDocs.map((r) => r._id);
    if (f.staff) ids = roleDocs.filter((r) => (r.permissions & ~DEFAULT_PERMISSIONS) !== 0).map((r) => r._id);
    if (f.roleIds) ids = ids.filter((id) => f.roleIds?.includes(id));
    userConditions.push({ roleId: { $in: ids } });
  }
  if (f.invitedBy) userConditions.push({ _id: { $in: [] } }); // no invites on this server
  let ipFiltered: Id[] | null = null;
  if (f.ip) {
    const range = parseCidr(f.ip);
    if (!range) return { _id: { $in: [] } };
    const withIp = await collection(core.db, users)
      .find({ signUpIp: { $ne: null } }, { projection: { accountId: 1, signUpIp: 1 } })
      .toArray();
    const bits = BigInt((range.family === 4 ? 32 : 128) - range.prefix);
    ipFiltered = withIp
      .filter((u) => {
        const ip = parseIp(u.signUpIp as string);
        return ip !== null && ip.family === range.family && ip.value >> bits === range.value >> bits;
      })
      .map((u) => u.accountId);
  }
  if (userConditions.length > 0) {
    const ids = (
      await collection(core.db, users)
        .find({ $and: userConditions }, { projection: { accountId: 1 } })
        .toArray()
    ).map((u) => u.accountId);
    and.push({ _id: { $in: ids } });
  }
  if (ipFiltered) and.push({ _id: { $in: ipFiltered } });
  return and.length === 0 ? {} : { $and: and };
}

function v1Filter(q: Record<string, unknown>): AccountFilterInput {
  const on = (k: string) => railsBoolean(q[k]) === true;
  const str = (k: string) => (typeof q[k] === 'string' && q[k] !== '' ? q[k] : undefined);
  const status = (['active', 'pending', 'disabled', 'silenced', 'suspended', 'sensitized'] as const).find(on);
  return {
    origin: on('local') ? 'local' : on('remote') ? 'remote' : undefined,
    status,
    staff: on('staff') || undefined,
    username: str('username'),
    displayName: str('display_name'),
    byDomain: str('by_domain'),
    email: str('email'),
    ip: str('ip'),
  };
}

export function v2Filter(q: Record<string, unknown>): AccountFilterInput {
  const str = (k: string) => (typeof q[k] === 'string' && q[k] !== '' ? q[k] : undefined);
  const origin = str('origin');
  const status = str('status');
  const rawRoles = q.role_ids;
  const roleIds =
    rawRoles === undefined
      ? undefined
      : (Array.isArray(rawRoles) ? rawRoles : [rawRoles]).map((r) => parseId(r)).filter((r): r is Id => r !== null);
  return {
    origin: origin === 'local' || origin === 'remote' ? origin : undefined,
    status: (['active', 'pending', 'disabled', 'silenced', 'suspended', 'sensitized'] as const).find(
      (s) => s === status,
    ),
    staff: str('permissions') === 'staff' || undefined,
    roleIds,
    invitedBy: str('invited_by'),
    username: str('username'),
    displayName: str('display_name'),
    byDomain: str('by_domain'),
    email: str('email'),
    ip: str('ip'),
  };
}

async function targetOf(core: Core, raw: string): Promise<AccountDoc> {
  const account = await collection(core.db, accounts).findOne({ _id: idParam(raw) });
  if (!account) throw notFound();
  return account;
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
    const filter = await accountFilter(core, version === 'v1' ? v1Filter(q) : v2Filter(q));
    const page = adminPage(q);
    const docs = await findPage(collection(core.db, accounts), filter, page);
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
