// Annual reports area (Wrapstodon, Mastodon 4.3–4.6): the caller's generated reports (all, or one
// year), a year's state (available, generating, eligible, ineligible), asking for one to be
// generated (202 while the annual-reports pipeline works on it), and marking one read.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { AnnualReportDoc } from '../../core/model/annualReports.ts';
import { findLiveStatuses } from '../../core/statuses/reads.ts';
import { availableReports, markReportRead, reportState, requestReport } from '../../core/annualReports/reports.ts';
import { presentAccounts } from '../../core/entities/account.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { filterVisible } from '../../core/statuses/visibility.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';

const READ = { scopes: ['read', 'read:accounts'], user: 'required' as const };
const WRITE = { scopes: ['write', 'write:accounts'], user: 'required' as const };
const YearParams = Type.Object({ year: Type.String({ maxLength: 10 }) });

const yearOf = (raw: string) => (/^\d{1,4}$/.test(raw) ? Number(raw) : NaN);

/** WrappedAnnualReports: the reports with the accounts and statuses they name. */
async function wrapped(core: Core, docs: AnnualReportDoc[], viewer: AccountDoc) {
  const ids = [
    ...new Set(docs.flatMap((d) => Object.values(d.data?.top_statuses ?? {}).filter((v): v is string => v !== null))),
  ].map((id) => BigInt(id));
  const found = await findLiveStatuses(core, ids);
  return {
    annual_reports: docs.map((d) => ({
      year: d.year,
      data: d.data,
      schema_version: d.schemaVersion,
      // Mastodon links its shareable page here; this server has none.
      share_url: null,
      account_id: String(d.accountId),
    })),
    accounts: docs.length ? await presentAccounts(core, [viewer]) : [],
    statuses: await presentStatuses(core, await filterVisible(core, viewer, found), viewer),
  };
}

const annualReportsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get('/api/v1/annual_reports', { config: { auth: READ } }, async (request) => {
    const { account } = requireUser(request);
    return wrapped(core, await availableReports(core, account._id), account);
  });

  app.get(
    '/api/v1/annual_reports/:year',
    { schema: { params: YearParams }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const docs = await availableReports(core, account._id, yearOf(request.params.year));
      if (docs.length === 0) throw notFound();
      return wrapped(core, docs, account);
    },
  );

  app.get(
    '/api/v1/annual_reports/:year/state',
    { schema: { params: YearParams }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return { state: await reportState(core, account._id, yearOf(request.params.year)) };
    },
  );

  app.post(
    '/api/v1/annual_reports/:year/generate',
    { schema: { params: YearParams }, config: { auth: WRITE } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const generating = await requestReport(core, account._id, yearOf(request.params.year));
      return reply.code(generating ? 202 : 200).send({});
    },
  );

  app.post(
    '/api/v1/annual_reports/:year/read',
    { schema: { params: YearParams }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      if (!(await markReportRead(core, account._id, yearOf(request.params.year)))) throw notFound();
      return {};
    },
  );
};

export default annualReportsArea;
