// The audit log (view_audit_log, Mastodon's /admin/action_logs): who did what to which record,
// newest first, filtered by the acting staff member.
import type { AdminArea } from './kit.ts';
import { collection } from '../../core/db/mongo.ts';
import { adminActions } from '../../core/model/adminActions.ts';
import { accounts } from '../../core/model/accounts.ts';
import { parseId } from '../../core/ids.ts';
import { adminPage } from '../../api/admin/guard.ts';
import { findPage } from '../../api/pagination.ts';

const actionLogPages: AdminArea = (app, { core, asStaff, view }) => {
  app.get<{ Querystring: { account_id?: string; max_id?: string } }>(
    '/admin/action_logs',
    asStaff('view_audit_log', async (request, reply, me) => {
      const actor = parseId(request.query.account_id);
      const entries = await findPage(
        collection(core.db, adminActions),
        actor === null ? {} : { accountId: actor },
        adminPage({ limit: '100', max_id: request.query.max_id }),
      );
      const ids = [...new Set(entries.map((e) => e.accountId).filter((id): id is bigint => id !== null))];
      const actors = await collection(core.db, accounts)
        .find({ _id: { $in: ids } }, { projection: { username: 1 } })
        .toArray();
      const nameOf = new Map(actors.map((a) => [a._id, a.username]));
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
