// /admin/accounts: search and filters (origin, moderation state, role, username, domain, e-mail,
// IP: Mastodon's AccountFilter, the admin API's), an account's page with its actions (approve,
// reject, warn/freeze/limit/suspend with a strike, undo), role changes (manage_roles) and the
// two-factor reset (manage_user_access), and sign-ups approved or rejected in bulk.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { findAccount } from '../../core/accounts/queries.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { hasPermission } from '../../core/roles/permissions.ts';
import { findRole, listRoles } from '../../core/roles/roles.ts';
import {
  performAccountAction,
  setSilenced,
  unsuspendAccount,
  userOfAccount,
} from '../../core/moderation/accountActions.ts';
import { rejectPendingUser } from '../../core/moderation/accountRemoval.ts';
import { assertOutranks } from '../../core/moderation/outranks.ts';
import { assignRole } from '../../core/moderation/roles.ts';
import { approveUser } from '../../core/users/moderation.ts';
import { resetTwoFactorByAdmin } from '../../core/users/twoFactor.ts';
import { presentAdminAccount, presentAdminAccounts } from '../../core/entities/admin.ts';
import { ApiError, forbidden } from '../../core/errors.ts';
import { adminAccountsPage, v2Filter } from '../../core/moderation/accountSearch.ts';
import { adminPage } from '../../api/admin/guard.ts';
import { formCheckbox } from '../forms.ts';

const QUERY = ['origin', 'status', 'role_ids', 'username', 'email', 'ip', 'by_domain'] as const;
const BATCH_LIMIT = 200;

const accountPages: AdminArea = (app, { core, asStaff, view, attempt, field }) => {
  async function allRoles() {
    return listRoles(core, 'ascending');
  }

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/admin/accounts',
    asStaff('manage_users', async (request, reply, me) => {
      const q = Object.fromEntries(QUERY.map((k) => [k, String(request.query[k] ?? '').trim()]));
      // A blank field is no filter (a blank role would otherwise match no one).
      const docs = await adminAccountsPage(
        core,
        v2Filter(Object.fromEntries(Object.entries(q).filter(([, v]) => v !== ''))),
        adminPage({ limit: '50', max_id: request.query.max_id }),
      );
      return view(reply, me, 'accounts', 'admin.accounts.title', {
        accounts: await presentAdminAccounts(core, docs),
        roles: await allRoles(),
        q,
      });
    }),
  );

  async function accountOf(raw: unknown): Promise<AccountDoc | null> {
    const id = parseId(raw);
    return id === null ? null : findAccount(core, id);
  }

  async function accountPage(reply: FastifyReply, me: Staff, target: AccountDoc, error: string | null = null) {
    const user = await userOfAccount(core, target);
    const mayChangeRole = user !== null && hasPermission(me.permissions, 'manage_roles');
    return view(
      reply,
      me,
      'account',
      'admin.accounts.one',
      {
        account: await presentAdminAccount(core, target),
        error,
        twoFactor: user?.otpRequiredForLogin === true,
        mayResetTwoFactor: user !== null && hasPermission(me.permissions, 'manage_user_access'),
        // Only the roles below one's own may be given (as Mastodon's role.overrides?).
        assignable: mayChangeRole ? (await allRoles()).filter((r) => r.position < me.role.position) : null,
        roleId: user?.roleId === null || user === null ? '' : String(user.roleId),
      },
      error ? 422 : 200,
    );
  }

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id',
    asStaff('manage_users', async (request, reply, me) => {
      const target = await accountOf(request.params.id);
      if (!target) return reply.callNotFound();
      return accountPage(reply, me, target);
    }),
  );

  async function pendingUser(t: AccountDoc) {
    const user = await userOfAccount(core, t);
    if (!user || user.approved) throw new ApiError(403, 'This account is not awaiting approval');
    return user;
  }

  async function loginOf(t: AccountDoc) {
    const user = await userOfAccount(core, t);
    if (!user) throw new ApiError(422, 'This account has no login on this server');
    return user;
  }

  const actions: Record<string, (t: AccountDoc, me: Staff, request: FastifyRequest) => Promise<unknown>> = {
    approve: async (t, me) => approveUser(core, await pendingUser(t), me.account._id),
    reject: async (t, me) => {
      await pendingUser(t);
      return rejectPendingUser(core, t, me.account._id);
    },
    action: (t, me, request) =>
      performAccountAction(
        core,
        t,
        {
          type: field(request, 'type'),
          text: field(request, 'text'),
          sendEmailNotification: formCheckbox(request, 'send_email_notification'),
        },
        me.account._id,
      ),
    unsilence: (t, me) => setSilenced(core, t, false, me.account._id),
    unsuspend: (t, me) => unsuspendAccount(core, t, me.account._id),
    role: async (t, me, request) => {
      const raw = field(request, 'role_id');
      const role = raw === '' ? null : await findRole(core, parseId(raw) ?? -1n);
      if (raw !== '' && !role) throw new ApiError(422, 'Role not found');
      return assignRole(core, await loginOf(t), role, me.role, me.account._id);
    },
    disable_2fa: async (t, me) => {
      if (!hasPermission(me.permissions, 'manage_user_access')) throw forbidden();
      return resetTwoFactorByAdmin(core, await loginOf(t), t.username, me.account._id);
    },
  };

  app.post<{ Params: { id: string; action: string } }>(
    '/admin/accounts/:id/:action',
    { preHandler: app.csrfProtection },
    asStaff('manage_users', async (request, reply, me) => {
      const target = await accountOf(request.params.id);
      const run = actions[request.params.action];
      if (!target || !run) return reply.callNotFound();
      const error = await attempt(async () => {
        await assertOutranks(core, me.user, target);
        await run(target, me, request);
      });
      const after = await accountOf(request.params.id);
      if (error || !after) return accountPage(reply, me, after ?? target, error ?? 'Record not found');
      return reply.redirect(`/admin/accounts/${target._id}`, 303);
    }),
  );

  // Approve or reject several sign-ups at once (the pending list's checkboxes).
  app.post(
    '/admin/accounts/batch',
    { preHandler: app.csrfProtection },
    asStaff('manage_users', async (request, reply, me) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const raw = body.account_ids ?? body['account_ids[]'];
      const ids = (Array.isArray(raw) ? raw : [raw]).map((v) => parseId(v)).filter((v): v is Id => v !== null);
      const which = field(request, 'batch') === 'reject' ? 'reject' : 'approve';
      for (const id of ids.slice(0, BATCH_LIMIT)) {
        const target = await findAccount(core, id);
        if (target) await attempt(() => actions[which](target, me, request));
      }
      return reply.redirect('/admin/accounts?status=pending', 303);
    }),
  );
};

export default accountPages;
