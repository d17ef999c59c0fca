// Announcements (manage_announcements, Mastodon's /admin/announcements): written, published,
// unpublished and deleted through the same core operations as the admin API, which also push
// them to the streaming clients.
import { listResource, type AdminArea } from './kit.ts';
import {
  ANNOUNCEMENT_TEXT_LIMIT,
  createAnnouncement,
  deleteAnnouncement,
  listAllAnnouncements,
  setPublished,
} from '../../core/announcements/announcements.ts';
import { formCheckbox } from '../forms.ts';

const announcementPages: AdminArea = (app, kit) => {
  const { core, field } = kit;
  listResource(app, kit, 'manage_announcements', {
    paths: { list: '/admin/announcements', action: '/admin/announcements/:id/:action' },
    template: 'announcements',
    load: async () => ({ announcements: (await listAllAnnouncements(core)).reverse(), limit: ANNOUNCEMENT_TEXT_LIMIT }),
    create: (request) =>
      createAnnouncement(core, {
        text: field(request, 'text', ANNOUNCEMENT_TEXT_LIMIT + 1),
        publish: formCheckbox(request, 'publish'),
      }),
    // The core operations answer 404 for an unknown announcement.
    find: async (id) => id,
    actions: {
      publish: (id) => setPublished(core, id, true),
      unpublish: (id) => setPublished(core, id, false),
      delete: (id) => deleteAnnouncement(core, id),
    },
  });
};

export default announcementPages;
