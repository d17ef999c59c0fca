// The audit log (view_audit_log, Mastodon's /admin/action_logs): who did what to which record,
// newest first, filtered by the acting staff member.
import type { AdminArea } from './kit.ts';
import { adminActionsPage } from '../../core/users/moderation.ts';
import { usernamesOf } from '../../core/accounts/queries.ts';
import { parseId } from '../../core/ids.ts';
import { adminPage } from '../../api/admin/guard.ts';

const actionLogPages: AdminArea = (app, { core, asStaff, view }) => {
  app.get<{ Querystring: { account_id?: string; max_id?: string } }>(
    '/admin/action_logs',
    asStaff('view_audit_log', async (request, reply, me) => {
      const actor = parseId(request.query.account_id);
      const entries = await adminActionsPage(core, actor, adminPage({ limit: '100', max_id: request.query.max_id }));
      const ids = [...new Set(entries.map((e) => e.accountId).filter((id): id is bigint => id !== null))];
      const nameOf = await usernamesOf(core, ids);
      return view(reply, me, 'action_logs', 'admin.action_logs.title', {
        entries: entries.map((e) => ({
          ...e,
          actor: e.accountId === null ? null : (nameOf.get(e.accountId) ?? String(e.accountId)),
        })),
        next: entries.length === 100 ? String(entries[entries.length - 1]._id) : null,
      });
    }),
  );
};

export default actionLogPages;
