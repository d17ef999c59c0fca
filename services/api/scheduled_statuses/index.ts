// Scheduled statuses area: list, show, reschedule and cancel one's own scheduled posts.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { requireUser } from '../plugins/auth.ts';
import { ApiError, notFound, missingParam } from '../errors.ts';
import { pageParams, setRecordPageLinks } from '../pagination.ts';
import { parseId } from '../../core/ids.ts';
import {
  deleteScheduledStatus,
  findOwnScheduledStatus,
  listScheduledStatuses,
  rescheduleStatus,
} from '../../core/scheduledStatuses/scheduledStatuses.ts';
import { ScheduledStatusEntity, presentScheduledStatus } from '../../core/entities/scheduledStatus.ts';
import { AnyIdParams } from '../params.ts';

const read = { auth: { scopes: ['read', 'read:statuses'], user: 'required' as const } };
const write = { auth: { scopes: ['write', 'write:statuses'], user: 'required' as const } };

function idOf(raw: string) {
  const id = parseId(raw);
  if (id === null) throw notFound();
  return id;
}

/** `scheduled_at` as Rails parses it: an ISO 8601 time; anything else is 422 "Invalid date supplied". */
export function parseScheduledAt(value: unknown): Date {
  if (value === undefined || value === null || value === '') throw missingParam('scheduled_at');
  const d = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw new ApiError(422, 'Invalid date supplied');
  return d;
}

const scheduledStatusesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/scheduled_statuses',
    { config: read, schema: { response: { 200: Type.Array(ScheduledStatusEntity) } } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const page = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const docs = await listScheduledStatuses(core, account._id, page);
      setRecordPageLinks(core, request, reply, docs, page.limit, 'min_id');
      return Promise.all(docs.map((d) => presentScheduledStatus(core, d)));
    },
  );

  app.get(
    '/api/v1/scheduled_statuses/:id',
    { config: read, schema: { params: AnyIdParams, response: { 200: ScheduledStatusEntity } } },
    async (request) => {
      const { account } = requireUser(request);
      return presentScheduledStatus(core, await findOwnScheduledStatus(core, account._id, idOf(request.params.id)));
    },
  );

  app.put(
    '/api/v1/scheduled_statuses/:id',
    {
      config: write,
      schema: {
        params: AnyIdParams,
        body: Type.Object({ scheduled_at: Type.Optional(Type.Unknown()) }, { additionalProperties: true }),
        response: { 200: ScheduledStatusEntity },
      },
    },
    async (request) => {
      const { account } = requireUser(request);
      const id = idOf(request.params.id);
      const body = (request.body ?? {}) as { scheduled_at?: unknown };
      // Like Mastodon's update with permitted params: nothing to change is not an error.
      if (body.scheduled_at === undefined)
        return presentScheduledStatus(core, await findOwnScheduledStatus(core, account._id, id));
      const doc = await rescheduleStatus(core, account._id, id, parseScheduledAt(body.scheduled_at));
      return presentScheduledStatus(core, doc);
    },
  );

  app.delete('/api/v1/scheduled_statuses/:id', { config: write, schema: { params: AnyIdParams } }, async (request) => {
    const { account } = requireUser(request);
    await deleteScheduledStatus(core, account._id, idOf(request.params.id));
    return {};
  });
};

export default scheduledStatusesArea;
