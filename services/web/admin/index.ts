// The moderation dashboard (/admin, issue 27): staff pages over the same core operations as the
// admin API, each behind the role permission its API route names (view_dashboard, manage_reports,
// manage_users, manage_federation). Every form posts with a CSRF token; an action the core refuses
// (validation, rank) comes back as the page with the message.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { accounts } from '../../core/model/accounts.ts';
import { reports, type ReportDoc } from '../../core/model/reports.ts';
import { instanceDomainBlocks } from '../../core/model/instanceDomainBlocks.ts';
import { collection } from '../../core/db/mongo.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { hasPermission, type Permission } from '../../core/roles/permissions.ts';
import { roleOfUser } from '../../core/roles/roles.ts';
import { assignReport, getReport, reopenReport, resolveReport } from '../../core/moderation/reports.ts';
import {
  performAccountAction,
  rejectPendingUser,
  removeStatusesByModerator,
  setSilenced,
  unsuspendAccount,
  userOfAccount,
} from '../../core/moderation/accountActions.ts';
import { assertOutranks } from '../../core/moderation/outranks.ts';
import { approveUser } from '../../core/users/moderation.ts';
import { createDomainBlock, deleteDomainBlock } from '../../core/moderation/domainBlocks.ts';
import { presentAdminAccount, presentAdminAccounts, presentAdminReports } from '../../core/entities/admin.ts';
import type { Status } from '../../core/entities/status.ts';
import { ApiError } from '../../core/errors.ts';
import { accountFilter, v2Filter } from '../../api/admin/accounts.ts';
import { adminPage } from '../../api/admin/guard.ts';
import { findPage } from '../../api/pagination.ts';
import { requireSignedIn } from '../guard.ts';
import { messagePage } from '../pages.ts';
import { page } from '../view.ts';
import { formCheckbox, formField } from '../forms.ts';
import { formatDate } from '../format.ts';
import { statusView } from '../public/present.ts';
import { computeMeasures } from '../../core/moderation/dashboard.ts';

interface Staff {
  user: UserDoc;
  account: AccountDoc;
  permissions: number;
}

/** The sections of the dashboard, each with the permission its admin API routes name. */
const SECTIONS: { path: string; label: string; permission: Permission }[] = [
  { path: '/admin/reports', label: 'admin.nav.reports', permission: 'manage_reports' },
  { path: '/admin/accounts', label: 'admin.nav.accounts', permission: 'manage_users' },
  { path: '/admin/domain_blocks', label: 'admin.nav.domain_blocks', permission: 'manage_federation' },
];

const adminPages: FastifyPluginAsync<{ core: Core }> = async (app, { core }) => {
  /** The signed-in staff member holding `permission`; otherwise the log-in redirect or a 403 page. */
  async function staff(request: FastifyRequest, reply: FastifyReply, permission: Permission): Promise<Staff | null> {
    const signedIn = await requireSignedIn(core, request, reply, request.url.split('?')[0]);
    if (!signedIn) return null;
    const role = await roleOfUser(core, signedIn.user);
    if (!hasPermission(role.permissions, permission)) {
      await messagePage(reply, core, {
        status: 403,
        title: 'errors.title',
        lines: ['admin.forbidden'],
        translate: true,
        signedInAs: signedIn.account.username,
        csrf: reply.generateCsrf(),
      });
      return null;
    }
    return { ...signedIn, permissions: role.permissions };
  }

  function view(
    reply: FastifyReply,
    me: Staff,
    template: string,
    title: string,
    data: Record<string, unknown>,
    status = 200,
  ): Promise<FastifyReply> {
    return page(reply, {
      status,
      template: `admin/${template}`,
      title,
      instance: core.config.localDomain,
      signedInAs: me.account.username,
      csrf: reply.generateCsrf(),
      data: {
        ...data,
        wide: true,
        sections: SECTIONS.filter((s) => hasPermission(me.permissions, s.permission)),
        formatDate: (iso: string) => formatDate(new Date(iso)),
        statusView: (s: Status) => statusView(s),
      },
    });
  }

  /** Runs a core operation; a refusal (4xx) becomes its message, anything else propagates. */
  async function attempt(run: () => Promise<unknown>): Promise<string | null> {
    try {
      await run();
      return null;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return err.message;
      throw err;
    }
  }

  const field = (request: FastifyRequest, name: string): string => formField(request, name);

  /** The measures the dashboard charts (the admin API's POST /api/v1/admin/measures). */
  const CHARTED = ['new_users', 'active_users', 'interactions', 'opened_reports', 'resolved_reports'];
  const PERIODS = [7, 30, 90];

  app.get<{ Querystring: { days?: string } }>('/admin', async (request, reply) => {
    const me = await staff(request, reply, 'view_dashboard');
    if (!me) return reply;
    const days = PERIODS.find((d) => String(d) === request.query.days) ?? 30;
    const end = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000);
    const start = new Date(end.getTime() - days * 86_400_000);
    const [open, pending, measures] = await Promise.all([
      collection(core.db, reports).countDocuments({ actionTakenAt: null }),
      collection(core.db, accounts).countDocuments({ pendingUser: true }),
      computeMeasures(core, CHARTED, { start, end }, {}),
    ]);
    // Server-rendered bar charts: one bar per day, scaled to the period's highest value.
    const charts = measures.map((m) => {
      const values = m.data.map((d) => Number(d.value));
      const max = Math.max(1, ...values);
      return {
        key: m.key,
        total: m.total,
        bars: m.data.map((d, i) => ({
          x: (i * 300) / Math.max(1, m.data.length),
          width: Math.max(1, 300 / Math.max(1, m.data.length) - 1),
          height: (Number(d.value) / max) * 60,
          label: `${d.date.slice(0, 10)}: ${d.value}`,
        })),
      };
    });
    return view(reply, me, 'dashboard', 'admin.dashboard.title', { open, pending, charts, days, periods: PERIODS });
  });

  // ---- reports ----

  app.get<{ Querystring: Record<string, string | undefined> }>('/admin/reports', async (request, reply) => {
    const me = await staff(request, reply, 'manage_reports');
    if (!me) return reply;
    const q = request.query;
    const resolved = q.resolved === '1';
    const filter: Record<string, unknown> = { actionTakenAt: resolved ? { $ne: null } : null };
    if (q.assigned === 'me') filter.assignedAccountId = me.account._id;
    const domain = q.by_target_domain?.trim().toLowerCase();
    if (domain) {
      const ids = await collection(core.db, accounts)
        .find({ domain }, { projection: { _id: 1 } })
        .toArray();
      filter.targetAccountId = { $in: ids.map((a) => a._id) };
    }
    const docs = await findPage(collection(core.db, reports), filter, adminPage({ limit: '50', max_id: q.max_id }));
    const list = await presentAdminReports(core, docs, me.account);
    return view(reply, me, 'reports', 'admin.reports.title', {
      reports: list,
      resolved,
      assigned: q.assigned === 'me',
      domain: domain ?? '',
    });
  });

  async function reportPage(reply: FastifyReply, me: Staff, report: ReportDoc, error: string | null = null) {
    const [entity] = await presentAdminReports(core, [report], me.account);
    return view(
      reply,
      me,
      'report',
      'admin.reports.one',
      { report: entity, error, mine: report.assignedAccountId === me.account._id },
      error ? 422 : 200,
    );
  }

  async function reportOf(raw: string): Promise<ReportDoc | null> {
    const id = parseId(raw);
    if (id === null) return null;
    return getReport(core, id).catch(() => null);
  }

  app.get<{ Params: { id: string } }>('/admin/reports/:id', async (request, reply) => {
    const me = await staff(request, reply, 'manage_reports');
    if (!me) return reply;
    const report = await reportOf(request.params.id);
    if (!report) return reply.callNotFound();
    return reportPage(reply, me, report);
  });

  const reportActions: Record<string, (report: ReportDoc, me: Staff, request: FastifyRequest) => Promise<unknown>> = {
    assign_to_self: (r, me) => assignReport(core, r, me.account._id, me.account._id),
    unassign: (r, me) => assignReport(core, r, null, me.account._id),
    resolve: (r, me) => resolveReport(core, r, me.account._id),
    reopen: (r, me) => reopenReport(core, r, me.account._id),
    // warn, mark sensitive, freeze, limit, suspend: a strike with the moderator's text, as the API.
    action: async (r, me, request) => {
      const target = await collection(core.db, accounts).findOne({ _id: r.targetAccountId });
      if (!target) throw new ApiError(404, 'Record not found');
      await assertOutranks(core, me.user, target);
      const type = field(request, 'type');
      const text = field(request, 'text');
      const notify = formCheckbox(request, 'send_email_notification');
      if (type === 'delete_statuses') {
        if (r.statusIds.length === 0) throw new ApiError(422, 'The report names no posts');
        await removeStatusesByModerator(core, r.statusIds, me.account._id, {
          text,
          reportId: r._id,
          sendEmail: notify,
        });
        return resolveReport(core, await getReport(core, r._id), me.account._id);
      }
      return performAccountAction(
        core,
        target,
        { type, reportId: r._id, text, sendEmailNotification: notify },
        me.account._id,
      );
    },
  };

  app.post<{ Params: { id: string; action: string } }>(
    '/admin/reports/:id/:action',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_reports');
      if (!me) return reply;
      const report = await reportOf(request.params.id);
      const run = reportActions[request.params.action];
      if (!report || !run) return reply.callNotFound();
      const error = await attempt(() => run(report, me, request));
      if (error) return reportPage(reply, me, await getReport(core, report._id), error);
      return reply.redirect(`/admin/reports/${report._id}`, 303);
    },
  );

  // ---- accounts ----

  app.get<{ Querystring: Record<string, string | undefined> }>('/admin/accounts', async (request, reply) => {
    const me = await staff(request, reply, 'manage_users');
    if (!me) return reply;
    const q = request.query;
    const filter = await accountFilter(core, v2Filter(q));
    const docs = await findPage(collection(core.db, accounts), filter, adminPage({ limit: '50', max_id: q.max_id }));
    return view(reply, me, 'accounts', 'admin.accounts.title', {
      accounts: await presentAdminAccounts(core, docs),
      q: {
        origin: q.origin ?? '',
        status: q.status ?? '',
        username: q.username ?? '',
        email: q.email ?? '',
        ip: q.ip ?? '',
        by_domain: q.by_domain ?? '',
      },
    });
  });

  async function accountOf(raw: string): Promise<AccountDoc | null> {
    const id = parseId(raw);
    return id === null ? null : collection(core.db, accounts).findOne({ _id: id });
  }

  async function accountPage(reply: FastifyReply, me: Staff, target: AccountDoc, error: string | null = null) {
    return view(
      reply,
      me,
      'account',
      'admin.accounts.one',
      { account: await presentAdminAccount(core, target), error },
      error ? 422 : 200,
    );
  }

  app.get<{ Params: { id: string } }>('/admin/accounts/:id', async (request, reply) => {
    const me = await staff(request, reply, 'manage_users');
    if (!me) return reply;
    const target = await accountOf(request.params.id);
    if (!target) return reply.callNotFound();
    return accountPage(reply, me, target);
  });

  const accountActions: Record<string, (t: AccountDoc, me: Staff, request: FastifyRequest) => Promise<unknown>> = {
    approve: async (t, me) => {
      const user = await userOfAccount(core, t);
      if (!user || user.approved) throw new ApiError(403, 'This account is not awaiting approval');
      return approveUser(core, user, me.account._id);
    },
    reject: async (t, me) => {
      const user = await userOfAccount(core, t);
      if (!user || user.approved) throw new ApiError(403, 'This account is not awaiting approval');
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
  };

  app.post<{ Params: { id: string; action: string } }>(
    '/admin/accounts/:id/:action',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_users');
      if (!me) return reply;
      const target = await accountOf(request.params.id);
      const run = accountActions[request.params.action];
      if (!target || !run) return reply.callNotFound();
      const error = await attempt(async () => {
        await assertOutranks(core, me.user, target);
        await run(target, me, request);
      });
      const after = await accountOf(request.params.id);
      if (error || !after) return accountPage(reply, me, after ?? target, error ?? 'Record not found');
      return reply.redirect(`/admin/accounts/${target._id}`, 303);
    },
  );

  // Approve or reject several sign-ups at once (the pending list's checkboxes).
  app.post('/admin/accounts/batch', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_users');
    if (!me) return reply;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const raw = body.account_ids ?? body['account_ids[]'];
    const ids = (Array.isArray(raw) ? raw : [raw]).map((v) => parseId(v)).filter((v): v is Id => v !== null);
    const which = field(request, 'batch') === 'reject' ? 'reject' : 'approve';
    for (const id of ids.slice(0, 200)) {
      const target = await collection(core.db, accounts).findOne({ _id: id });
      if (target) await attempt(() => accountActions[which](target, me, request));
    }
    return reply.redirect('/admin/accounts?status=pending', 303);
  });

  // ---- federation: domain blocks ----

  async function blocksPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = await collection(core.db, instanceDomainBlocks).find({}).sort({ domain: 1 }).limit(500).toArray();
    return view(reply, me, 'domain_blocks', 'admin.domain_blocks.title', { blocks: list, error }, error ? 422 : 200);
  }

  app.get('/admin/domain_blocks', async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    return blocksPage(reply, me);
  });

  app.post('/admin/domain_blocks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_federation');
    if (!me) return reply;
    const error = await attempt(() =>
      createDomainBlock(
        core,
        {
          domain: field(request, 'domain'),
          severity: field(request, 'severity') || 'silence',
          rejectMedia: formCheckbox(request, 'reject_media'),
          rejectReports: formCheckbox(request, 'reject_reports'),
          privateComment: field(request, 'private_comment'),
          publicComment: field(request, 'public_comment'),
          obfuscate: formCheckbox(request, 'obfuscate'),
        },
        me.account._id,
      ),
    );
    if (error) return blocksPage(reply, me, error);
    return reply.redirect('/admin/domain_blocks', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/domain_blocks/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_federation');
      if (!me) return reply;
      const id = parseId(request.params.id);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => deleteDomainBlock(core, id, me.account._id));
      if (error) return blocksPage(reply, me, error);
      return reply.redirect('/admin/domain_blocks', 303);
    },
  );
};

export default adminPages;
