// Admin announcements (/api/v1/admin/announcements): what the CLI's `announcements` commands do,
// over the API, for roles with the manage_announcements permission. Mastodon keeps this in its web
// admin; the shapes follow the user-facing Announcement plus the admin's `text` and `published`.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import type { AnnouncementDoc } from '../../core/model/announcements.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import {
  createAnnouncement,
  deleteAnnouncement,
  findAnnouncement,
  listAllAnnouncements,
  presentAnnouncements,
  setPublished,
  updateAnnouncement,
} from '../../core/announcements/announcements.ts';
import { notFound, validationFailed } from '../errors.ts';
import { BoolLike } from '../params.ts';
import { adminConfig, adminScopes, idParam, IdParams } from './guard.ts';

const { read, write } = adminScopes(null);
const READ = adminConfig(read, 'manage_announcements');
const WRITE = adminConfig(write, 'manage_announcements');

const DateLike = Type.Union([Type.String({ maxLength: 40 }), Type.Null()]);
const AnnouncementBody = Type.Object(
  {
    text: Type.Optional(Type.String({ maxLength: 20_000 })),
    starts_at: Type.Optional(DateLike),
    ends_at: Type.Optional(DateLike),
    all_day: Type.Optional(BoolLike),
    publish: Type.Optional(BoolLike),
  },
  { additionalProperties: true },
);

function date(value: string | null | undefined, name: string): Date | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw validationFailed(`${name} is not a valid date`);
  return d;
}

async function present(core: Core, doc: AnnouncementDoc) {
  const [entity] = await presentAnnouncements(core, [doc], null);
  return { ...entity, text: doc.text, published: doc.published };
}

const adminAnnouncements: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get('/api/v1/admin/announcements', { config: READ }, async () =>
    Promise.all((await listAllAnnouncements(core)).map((a) => present(core, a))),
  );

  app.get('/api/v1/admin/announcements/:id', { config: READ, schema: { params: IdParams } }, async (request) => {
    const doc = await findAnnouncement(core, idParam(request.params.id));
    if (!doc) throw notFound();
    return present(core, doc);
  });

  app.post(
    '/api/v1/admin/announcements',
    { config: WRITE, schema: { body: Type.Optional(AnnouncementBody) } },
    async (request) => {
      const body = request.body ?? {};
      const doc = await createAnnouncement(core, {
        text: body.text ?? '',
        startsAt: date(body.starts_at, 'Starts at') ?? null,
        endsAt: date(body.ends_at, 'Ends at') ?? null,
        allDay: railsBoolean(body.all_day) === true,
        publish: railsBoolean(body.publish) === true,
      });
      return present(core, doc);
    },
  );

  app.put(
    '/api/v1/admin/announcements/:id',
    { config: WRITE, schema: { params: IdParams, body: Type.Optional(AnnouncementBody) } },
    async (request) => {
      const body = request.body ?? {};
      const doc = await updateAnnouncement(core, idParam(request.params.id), {
        text: body.text,
        startsAt: date(body.starts_at, 'Starts at'),
        endsAt: date(body.ends_at, 'Ends at'),
        allDay: railsBoolean(body.all_day),
      });
      return present(core, doc);
    },
  );

  for (const [path, publish] of [
    ['/api/v1/admin/announcements/:id/publish', true],
    ['/api/v1/admin/announcements/:id/unpublish', false],
  ] as const) {
    app.post(path, { config: WRITE, schema: { params: IdParams } }, async (request) =>
      present(core, await setPublished(core, idParam(request.params.id), publish)),
    );
  }

  app.delete('/api/v1/admin/announcements/:id', { config: WRITE, schema: { params: IdParams } }, async (request) => {
    await deleteAnnouncement(core, idParam(request.params.id));
    return {};
  });
};

export default adminAnnouncements;
