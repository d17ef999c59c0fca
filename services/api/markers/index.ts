// Read markers (GET/POST /api/v1/markers) for `home` and `notifications`: `last_read_id`, `version`
// (incremented per save) and `updated_at`. The notifications marker drives the unread counts.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { MarkerDoc, MarkerTimeline } from '../../core/model/markers.ts';
import { markersOf, saveMarker } from '../../core/markers/markers.ts';
import { requireUser } from '../plugins/auth.ts';
import { READ_STATUSES as READ, WRITE_STATUSES as WRITE } from '../scopes.ts';

const TIMELINES: readonly MarkerTimeline[] = ['home', 'notifications'];

const MarkerEntity = Type.Object({ last_read_id: Type.String(), version: Type.Integer(), updated_at: Type.String() });
const Markers = Type.Object({ home: Type.Optional(MarkerEntity), notifications: Type.Optional(MarkerEntity) });
const Str = Type.String({ maxLength: 100 });
const MarkersQuery = Type.Object(
  { timeline: Type.Optional(Type.Union([Type.Array(Str, { maxItems: 10 }), Str])) },
  { additionalProperties: true },
);
const MarkerInput = Type.Object(
  { last_read_id: Type.Optional(Type.Union([Str, Type.Integer()])) },
  { additionalProperties: true },
);
const MarkersBody = Type.Object(
  { home: Type.Optional(MarkerInput), notifications: Type.Optional(MarkerInput) },
  { additionalProperties: true },
);

const present = (m: MarkerDoc) => ({
  last_read_id: m.lastReadId,
  version: m.version,
  updated_at: m.updatedAt.toISOString(),
});

const markersArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/markers',
    { schema: { querystring: MarkersQuery, response: { 200: Markers } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const raw = request.query.timeline ?? [];
      const wanted = (Array.isArray(raw) ? raw : [raw]).filter((t): t is MarkerTimeline =>
        TIMELINES.includes(t as MarkerTimeline),
      );
      if (wanted.length === 0) return {};
      const found = await markersOf(core, account._id, wanted);
      return Object.fromEntries(found.map((m) => [m.timeline, present(m)]));
    },
  );

  app.post(
    '/api/v1/markers',
    { schema: { body: Type.Optional(MarkersBody), response: { 200: Markers } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const out: Record<string, ReturnType<typeof present>> = {};
      for (const timeline of TIMELINES) {
        const input = request.body?.[timeline];
        if (!input || input.last_read_id === undefined || input.last_read_id === '') continue;
        const lastReadId = String(input.last_read_id);
        out[timeline] = present(await saveMarker(core, account._id, timeline, lastReadId));
      }
      return out;
    },
  );
};

export default markersArea;
