// Custom emojis (manage_custom_emojis, Mastodon's /admin/custom_emojis): the local emojis with
// their image, category and state; one uploaded (PNG or GIF) or an archive imported, enabled,
// disabled, moved to another category or deleted through the same core operations as `tootctl
// emoji`; other servers' emojis (`?remote=1`, `by_domain`) copied to local ones.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asValidation, type AdminArea, type Staff } from './kit.ts';
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
import { copyRemoteEmoji, listRemoteEmojis } from '../../core/emojis/emojiCopies.ts';
import { importEmojiArchive } from '../../core/emojis/emojiArchive.ts';
import { TarError } from '../../core/emojis/tarArchive.ts';

/** An archive import's outcome, shown above the list. */
interface ImportCounts {
  imported: number;
  skipped: number;
  failed: number;
}

const customEmojiPages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function emojisPage(
    reply: FastifyReply,
    me: Staff,
    opts: { error?: string | null; imported?: ImportCounts | null; remote?: boolean; domain?: string } = {},
  ) {
    const docs = opts.remote ? await listRemoteEmojis(core, { domain: opts.domain }) : await allLocalEmojis(core);
    const emojis = docs.map((doc) => ({ ...doc, id: String(doc._id), ...presentEmoji(core, doc) }));
    const error = opts.error ?? null;
    return view(
      reply,
      me,
      'custom_emojis',
      'admin.custom_emojis.title',
      { emojis, error, imported: opts.imported ?? null, remote: opts.remote === true, domain: opts.domain ?? '' },
      error ? 422 : 200,
    );
  }

  app.get<{ Querystring: { remote?: string; by_domain?: string } }>('/admin/custom_emojis', async (request, reply) => {
    const me = await staff(request, reply, 'manage_custom_emojis');
    if (!me) return reply;
    const domain = typeof request.query.by_domain === 'string' ? request.query.by_domain.slice(0, 253) : '';
    return emojisPage(reply, me, { remote: request.query.remote === '1' || domain !== '', domain });
  });

  app.post('/admin/custom_emojis/import', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_custom_emojis');
    if (!me) return reply;
    const archive = request.uploads?.archive;
    let imported: ImportCounts | null = null;
    const error = await attempt(async () => {
      if (!archive?.data.length) throw validationFailed("Archive can't be blank");
      const outcome = await asValidation(
        importEmojiArchive(core, archive.data, {
          overwrite: formCheckbox(request, 'overwrite'),
          category: field(request, 'category', 100).trim() || null,
          visibleInPicker: formCheckbox(request, 'visible_in_picker'),
        }),
        EmojiError,
        TarError,
      );
      imported = { imported: outcome.imported, skipped: outcome.skipped, failed: outcome.failed.length };
    });
    return emojisPage(reply, me, { error, imported });
  });

  app.post('/admin/custom_emojis/:id/copy', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_custom_emojis');
    if (!me) return reply;
    const id = idParam(request);
    if (id === null) return reply.callNotFound();
    const error = await attempt(() => asValidation(copyRemoteEmoji(core, id), EmojiError, TarError));
    if (error) return emojisPage(reply, me, { error, remote: true });
    return reply.redirect('/admin/custom_emojis', 303);
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
        EmojiError,
        TarError,
      );
    });
    if (error) return emojisPage(reply, me, { error });
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
      const error = await attempt(() => asValidation(run(emoji.shortcode, request), EmojiError, TarError));
      if (error) return emojisPage(reply, me, { error });
      return reply.redirect('/admin/custom_emojis', 303);
    },
  );
};

export default customEmojiPages;
