// /admin/reports: the queue (unresolved or resolved, assigned to me, by the target's server) and a
// report's page with assign, resolve/reopen and the actions with the strike text, as the admin API.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import type { ReportDoc } from '../../core/model/reports.ts';
import { findAccount } from '../../core/accounts/queries.ts';
import { reportsPage } from '../../core/moderation/reportLists.ts';
import { assignReport, getReport, reopenReport, resolveReport } from '../../core/moderation/reports.ts';
import { performAccountAction, removeStatusesByModerator } from '../../core/moderation/accountActions.ts';
import { assertOutranks } from '../../core/moderation/outranks.ts';
import { presentAdminReports } from '../../core/entities/admin.ts';
import { ApiError } from '../../core/errors.ts';
import { adminPage } from '../../api/admin/guard.ts';
import { formCheckbox } from '../forms.ts';

const reportPages: AdminArea = (app, { core, asStaff, view, attempt, field, idParam }) => {
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/admin/reports',
    asStaff('manage_reports', async (request, reply, me) => {
      const q = request.query;
      const resolved = q.resolved === '1';
      const domain = q.by_target_domain?.trim().toLowerCase();
      const docs = await reportsPage(
        core,
        { resolved, assignedTo: q.assigned === 'me' ? me.account._id : null, targetDomain: domain || null },
        adminPage({ limit: '50', max_id: q.max_id }),
      );
      const list = await presentAdminReports(core, docs, me.account);
      return view(reply, me, 'reports', 'admin.reports.title', {
        reports: list,
        resolved,
        assigned: q.assigned === 'me',
        domain: domain ?? '',
      });
    }),
  );

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

  async function reportOf(request: FastifyRequest): Promise<ReportDoc | null> {
    const id = idParam(request);
    if (id === null) return null;
    return getReport(core, id).catch(() => null);
  }

  app.get<{ Params: { id: string } }>(
    '/admin/reports/:id',
    asStaff('manage_reports', async (request, reply, me) => {
      const report = await reportOf(request);
      if (!report) return reply.callNotFound();
      return reportPage(reply, me, report);
    }),
  );

  const actions: Record<string, (report: ReportDoc, me: Staff, request: FastifyRequest) => Promise<unknown>> = {
    assign_to_self: (r, me) => assignReport(core, r, me.account._id, me.account._id),
    unassign: (r, me) => assignReport(core, r, null, me.account._id),
    resolve: (r, me) => resolveReport(core, r, me.account._id),
    reopen: (r, me) => reopenReport(core, r, me.account._id),
    // warn, mark sensitive, freeze, limit, suspend: a strike with the moderator's text, as the API.
    action: async (r, me, request) => {
      const target = await findAccount(core, r.targetAccountId);
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
    asStaff('manage_reports', async (request, reply, me) => {
      const report = await reportOf(request);
      const run = actions[request.params.action];
      if (!report || !run) return reply.callNotFound();
      const error = await attempt(() => run(report, me, request));
      if (error) return reportPage(reply, me, await getReport(core, report._id), error);
      return reply.redirect(`/admin/reports/${report._id}`, 303);
    }),
  );
};

export default reportPages;
