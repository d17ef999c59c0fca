// /admin: the measures the admin API computes (POST /api/v1/admin/measures), as server-rendered
// bar charts for a chosen period, with the open reports and pending sign-ups.
import type { AdminArea } from './kit.ts';
import { countOpenReports } from '../../core/moderation/reportLists.ts';
import { countPendingAccounts } from '../../core/moderation/accountSearch.ts';
import { computeMeasures } from '../../core/moderation/dashboard.ts';

const CHARTED = ['new_users', 'active_users', 'interactions', 'opened_reports', 'resolved_reports'];
const PERIODS = [7, 30, 90];
const DAY = 86_400_000;

const dashboardPage: AdminArea = (app, { core, asStaff, view }) => {
  app.get<{ Querystring: { days?: string } }>(
    '/admin',
    asStaff('view_dashboard', async (request, reply, me) => {
      const days = PERIODS.find((d) => String(d) === request.query.days) ?? 30;
      const end = new Date(Math.floor(Date.now() / DAY) * DAY + DAY);
      const start = new Date(end.getTime() - days * DAY);
      const [open, pending, measures] = await Promise.all([
        countOpenReports(core),
        countPendingAccounts(core),
        computeMeasures(core, CHARTED, { start, end }, {}),
      ]);
      // One bar per day, scaled to the period's highest value.
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
    }),
  );
};

export default dashboardPage;
