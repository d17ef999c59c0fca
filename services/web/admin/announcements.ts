// Announcements (manage_announcements, Mastodon's /admin/announcements): written, published,
// unpublished and deleted through the same core operations as the admin API, which also push
// them to the streaming clients.
import type { FastifyReply } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import {
  ANNOUNCEMENT_TEXT_LIMIT,
  createAnnouncement,
  deleteAnnouncement,
  listAllAnnouncements,
  setPublished,
} from '../../core/announcements/announcements.ts';
import type { Id } from '../../core/ids.ts';
import { formCheckbox } from '../forms.ts';

const announcementPages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function listPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const list = (await listAllAnnouncements(core)).reverse();
    return view(
      reply,
      me,
      'announcements',
      'admin.announcements.title',
      { announcements: list, error, limit: ANNOUNCEMENT_TEXT_LIMIT },
      error ? 422 : 200,
    );
  }

  app.get('/admin/announcements', async (request, reply) => {
    const me = await staff(request, reply, 'manage_announcements');
    if (!me) return reply;
    return listPage(reply, me);
  });

  app.post('/admin/announcements', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_announcements');
    if (!me) return reply;
    const error = await attempt(() =>
      createAnnouncement(core, {
        text: field(request, 'text', ANNOUNCEMENT_TEXT_LIMIT + 1),
        publish: formCheckbox(request, 'publish'),
      }),
    );
    if (error) return listPage(reply, me, error);
    return reply.redirect('/admin/announcements', 303);
  });

  const actions: Record<string, (id: Id) => Promise<unknown>> = {
    publish: (id) => setPublished(core, id, true),
    unpublish: (id) => setPublished(core, id, false),
    delete: (id) => deleteAnnouncement(core, id),
  };

  app.post<{ Params: { id: string; action: string } }>(
    '/admin/announcements/:id/:action',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_announcements');
      if (!me) return reply;
      const id = idParam(request);
      const run = actions[request.params.action];
      if (id === null || !run) return reply.callNotFound();
      const error = await attempt(() => run(id));
      if (error) return listPage(reply, me, error);
      return reply.redirect('/admin/announcements', 303);
    },
  );
};

export default announcementPages;
