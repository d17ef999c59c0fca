// Admin reports: list (unresolved by default), show, update (category, rules), assign to self,
// unassign, resolve, reopen.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Filter } from 'mongodb';
import type { AreaOptions } from '../areas.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { reports, type ReportDoc } from '../../core/model/reports.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { assignReport, getReport, reopenReport, resolveReport, updateReport } from '../../core/moderation/reports.ts';
import { validationFailed } from '../errors.ts';
import { BoolLike, CursorFields } from '../params.ts';
import { adminConfig, adminScopes, idParam, IdParams, listPage, moderator } from './guard.ts';
import { presentAdminReports } from '../../core/entities/admin.ts';

const SCOPES = adminScopes('reports');
const READ = adminConfig(SCOPES.read, 'manage_reports');
const WRITE = adminConfig(SCOPES.write, 'manage_reports');

const ListQuery = Type.Object(
  {
    resolved: Type.Optional(BoolLike),
    account_id: Type.Optional(Type.String({ maxLength: 30 })),
    target_account_id: Type.Optional(Type.String({ maxLength: 30 })),
    ...CursorFields,
  },
  { additionalProperties: true },
);

const IdList = Type.Union([
  Type.Array(Type.Union([Type.String({ maxLength: 30 }), Type.Integer()]), { maxItems: 100 }),
  Type.String({ maxLength: 30 }),
  Type.Integer(),
]);

const UpdateBody = Type.Object(
  {
    category: Type.Optional(Type.String({ maxLength: 30 })),
    rule_ids: Type.Optional(Type.Union([IdList, Type.Null()])),
  },
  { additionalProperties: true },
);

/** `rule_ids[]` as ids; 422 for anything that is not one. */
export function idList(value: unknown, field: string): Id[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => {
    const id = parseId(v);
    if (id === null) throw validationFailed(`${field} does not reference valid records`);
    return id;
  });
}

const adminReportsRoutes: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get('/api/v1/admin/reports', { schema: { querystring: ListQuery }, config: READ }, async (request, reply) => {
    const q = request.query;
    const filter: Filter<ReportDoc> = {};
    filter.actionTakenAt = railsBoolean(q.resolved) === true ? { $ne: null } : null;
    for (const [param, field] of [
      ['account_id', 'accountId'],
      ['target_account_id', 'targetAccountId'],
    ] as const) {
      const raw = q[param];
      if (raw === undefined || raw === '') continue;
      const id = parseId(raw);
      filter[field] = id ?? -1n;
    }
    const docs = await listPage(core, request, reply, reports, filter, 'since_id');
    return presentAdminReports(core, docs, moderator(request).account);
  });

  const one = async (report: ReportDoc, viewer: Parameters<typeof presentAdminReports>[2]) =>
    (await presentAdminReports(core, [report], viewer))[0];

  app.get('/api/v1/admin/reports/:id', { schema: { params: IdParams }, config: READ }, async (request) =>
    one(await getReport(core, idParam(request.params.id)), moderator(request).account),
  );

  app.put(
    '/api/v1/admin/reports/:id',
    { schema: { params: IdParams, body: Type.Optional(UpdateBody) }, config: WRITE },
    async (request) => {
      const me = moderator(request);
      const report = await getReport(core, idParam(request.params.id));
      const body = request.body ?? {};
      const updated = await updateReport(
        core,
        report,
        {
          category: body.category,
          ruleIds: body.rule_ids === undefined ? undefined : idList(body.rule_ids, 'Rule ids'),
        },
        me.account._id,
      );
      return one(updated, me.account);
    },
  );

  const action = (path: string, run: (report: ReportDoc, actor: Id) => Promise<ReportDoc>) =>
    app.post(path, { schema: { params: IdParams }, config: WRITE }, async (request) => {
      const me = moderator(request);
      const report = await getReport(core, idParam(request.params.id));
      return one(await run(report, me.account._id), me.account);
    });
  action('/api/v1/admin/reports/:id/assign_to_self', (report, actor) => assignReport(core, report, actor, actor));
  action('/api/v1/admin/reports/:id/unassign', (report, actor) => assignReport(core, report, null, actor));
  action('/api/v1/admin/reports/:id/resolve', (report, actor) => resolveReport(core, report, actor));
  action('/api/v1/admin/reports/:id/reopen', (report, actor) => reopenReport(core, report, actor));
};

export default adminReportsRoutes;
