// POST /api/v1/reports: report an account (and some of its statuses, and the rules they break).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { createReport, REPORT_COMMENT_MAX } from '../../core/moderation/reports.ts';
import { findVisibleAccount } from '../../core/accounts/queries.ts';
import { missingParam, notFound, validationFailed } from '../errors.ts';
import { requireUser } from '../plugins/auth.ts';
import { BoolLike } from '../params.ts';
import { presentReport } from '../../core/entities/admin.ts';

const IdLike = Type.Union([Type.String({ maxLength: 30 }), Type.Integer()]);
const IdArray = Type.Union([Type.Array(IdLike, { maxItems: 1000 }), IdLike, Type.Null()]);

const ReportBody = Type.Object(
  {
    account_id: Type.Optional(IdLike),
    status_ids: Type.Optional(IdArray),
    // Longer than the limit is accepted here so the answer is Mastodon's 422, not a schema 400.
    comment: Type.Optional(Type.Union([Type.String({ maxLength: REPORT_COMMENT_MAX * 20 }), Type.Null()])),
    category: Type.Optional(Type.Union([Type.String({ maxLength: 30 }), Type.Null()])),
    rule_ids: Type.Optional(IdArray),
    forward: Type.Optional(BoolLike),
    forward_to_domains: Type.Optional(
      Type.Union([
        Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100 }),
        Type.String({ maxLength: 300 }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: true },
);

function ids(value: unknown, onInvalid: () => Error): Id[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => {
    const id = parseId(v);
    if (id === null) throw onInvalid();
    return id;
  });
}

const reportsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/reports',
    {
      schema: { body: Type.Optional(ReportBody) },
      config: { auth: { scopes: ['write', 'write:reports'], user: 'required' } },
    },
    async (request) => {
      const { account } = requireUser(request);
      const body = request.body ?? {};
      if (body.account_id === undefined || body.account_id === '') throw missingParam('account_id');
      const targetId = parseId(body.account_id);
      const target = targetId === null ? null : await findVisibleAccount(core, targetId);
      if (!target) throw notFound();
      const forwardTo = body.forward_to_domains;
      const report = await createReport(core, account, target, {
        statusIds: ids(body.status_ids, notFound),
        comment: body.comment ?? '',
        category: body.category ?? undefined,
        ruleIds: ids(body.rule_ids, () => validationFailed('Rule ids does not reference valid rules')),
        forward: railsBoolean(body.forward) ?? false,
        forwardToDomains:
          forwardTo === undefined || forwardTo === null ? [] : Array.isArray(forwardTo) ? forwardTo : [forwardTo],
      });
      return presentReport(core, report, target);
    },
  );
};

export default reportsArea;
