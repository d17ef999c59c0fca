// Custom emojis (manage_custom_emojis, Mastodon's /admin/custom_emojis): the local emojis with
// their image, category and state; one uploaded (PNG or GIF), enabled, disabled, moved to another
// category or deleted through the same core operations as `tootctl emoji`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import {
  EmojiError,
  addCustomEmoji,
  allLocalEmojis,
  modifyCustomEmoji,
  presentEmoji,
  removeCustomEmoji,
} from '../../core/emojis/emojis.ts';
import { collection } from '../../core/db/mongo.ts';
import { customEmojis } from '../../core/model/customEmojis.ts';
import { validationFailed } from '../../core/errors.ts';
import { formCheckbox } from '../forms.ts';

/** The emoji module's own error: a validation message for the form. */
async function asValidation<T>(run: Promise<T>): Promise<T> {
  try {
    return await run;
  } catch (err) {
    throw err instanceof EmojiError ? validationFailed(err.message) : err;
  }
}

const customEmojiPages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function emojisPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    const emojis = (await allLocalEmojis(core)).map((doc) => ({
      ...doc,
      id: String(doc._id),
      ...presentEmoji(core, doc),
    }));
    return view(reply, me, 'custom_emojis', 'admin.custom_emojis.title', { emojis, error }, error ? 422 : 200);
  }

  app.get('/admin/custom_emojis', async (request, reply) => {
    const me = await staff(request, reply, 'manage_custom_emojis');
    if (!me) return reply;
    return emojisPage(reply, me);
  });

  app.post('/admin/custom_emojis', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_custom_emojis');
    if (!me) return reply;
    const image = request.uploads?.image;
    const error = await attempt(() => {
      if (!image?.data.length) throw validationFailed("Image can't be blank");
      return asValidation(
        addCustomEmoji(core, {
          shortcode: field(request, 'shortcode', 100).trim(),
          data: image.data,
          category: field(request, 'category', 100).trim() || null,
          visibleInPicker: formCheckbox(request, 'visible_in_picker'),
        }),
      );
    });
    if (error) return emojisPage(reply, me, error);
    return reply.redirect('/admin/custom_emojis', 303);
  });

  const actions: Record<string, (shortcode: string, request: FastifyRequest) => Promise<unknown>> = {
    enable: (shortcode) => modifyCustomEmoji(core, shortcode, { disabled: false }),
    disable: (shortcode) => modifyCustomEmoji(core, shortcode, { disabled: true }),
    category: (shortcode, request) =>
      modifyCustomEmoji(core, shortcode, { category: field(request, 'category', 100).trim() || null }),
    delete: (shortcode) => removeCustomEmoji(core, shortcode),
  };

  app.post<{ Params: { id: string; action: string } }>(
    '/admin/custom_emojis/:id/:action',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_custom_emojis');
      if (!me) return reply;
      const id = idParam(request);
      const run = actions[request.params.action];
      const emoji = id === null ? null : await collection(core.db, customEmojis).findOne({ _id: id, domain: null });
      if (!emoji || !run) return reply.callNotFound();
      const error = await attempt(() => asValidation(run(emoji.shortcode, request)));
      if (error) return emojisPage(reply, me, error);
      return reply.redirect('/admin/custom_emojis', 303);
    },
  );
};

export default customEmojiPages;
