// The admin API (/api/v1/admin, /api/v2/admin): every route needs a user token with its admin
// scope and a role holding its permission (guard.ts). Trends review lives with the trends area.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { enforcePermissions } from './guard.ts';
import accounts from './accounts.ts';
import reports from './reports.ts';
import federation from './federation.ts';
import blocks from './blocks.ts';
import dashboard from './dashboard.ts';
import announcements from './announcements.ts';

const adminArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, opts) => {
  enforcePermissions(app);
  await app.register(accounts, opts);
  await app.register(reports, opts);
  await app.register(federation, opts);
  await app.register(blocks, opts);
  await app.register(dashboard, opts);
  await app.register(announcements, opts);
};

export default adminArea;
