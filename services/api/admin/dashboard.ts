// Admin measures, dimensions and retention (POST, as Mastodon has them), for the dashboard.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { computeMeasures, DIMENSION_KEYS, MEASURE_KEYS, parseRange } from '../../core/moderation/dashboard.ts';
import { computeDimensions, computeRetention } from '../../core/moderation/dashboardBreakdowns.ts';
import { missingParam } from '../errors.ts';
import { adminConfig, adminScopes } from './guard.ts';

const CONFIG = adminConfig(adminScopes(null).read, 'view_dashboard');

const Keys = Type.Union([Type.Array(Type.String({ maxLength: 50 }), { maxItems: 50 }), Type.String({ maxLength: 50 })]);
const MetricBody = Type.Object(
  {
    keys: Type.Optional(Keys),
    start_at: Type.Optional(Type.String({ maxLength: 40 })),
    end_at: Type.Optional(Type.String({ maxLength: 40 })),
    limit: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 10 })])),
    frequency: Type.Optional(Type.String({ maxLength: 10 })),
  },
  { additionalProperties: true },
);

function keysOf(value: unknown, allowed: readonly string[]): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return [...new Set(list.filter((k): k is string => typeof k === 'string' && allowed.includes(k)))];
}

const dashboardRoutes: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/admin/measures',
    { schema: { body: Type.Optional(MetricBody) }, config: CONFIG },
    async (request) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      if (body.keys === undefined) throw missingParam('keys');
      const range = parseRange(body.start_at, body.end_at);
      if (!range) throw missingParam(body.start_at === undefined ? 'start_at' : 'end_at');
      return computeMeasures(core, keysOf(body.keys, MEASURE_KEYS), range, body);
    },
  );

  app.post(
    '/api/v1/admin/dimensions',
    { schema: { body: Type.Optional(MetricBody) }, config: CONFIG },
    async (request) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      if (body.keys === undefined) throw missingParam('keys');
      const range =
        parseRange(body.start_at, body.end_at) ??
        parseRange(new Date(Date.now() - 29 * 86_400_000).toISOString(), new Date().toISOString());
      const rawLimit = Number(body.limit ?? 10);
      const limit = Number.isFinite(rawLimit) ? Math.min(Math.max(Math.trunc(rawLimit), 1), 100) : 10;
      return computeDimensions(core, keysOf(body.keys, DIMENSION_KEYS), range!, limit, body);
    },
  );

  app.post(
    '/api/v1/admin/retention',
    { schema: { body: Type.Optional(MetricBody) }, config: CONFIG },
    async (request) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const range = parseRange(body.start_at, body.end_at);
      if (!range) return [];
      return computeRetention(core, range, body.frequency === 'month' ? 'month' : 'day');
    },
  );
};

export default dashboardRoutes;
