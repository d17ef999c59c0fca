// Custom emojis (manage_custom_emojis, Mastodon's /admin/custom_emojis): the local emojis with
// their image, category and state; one uploaded (PNG or GIF) or an archive imported, enabled,
// disabled, moved to another category or deleted through the same core operations as `tootctl
// emoji`; other servers' emojis (`?remote=1`, `by_domain`) copied to local ones.
import type { FastifyRequest } from 'fastify';
import { asValidation, listResource, type AdminArea } from './kit.ts';
import {
  EmojiError,
  addCustomEmoji,
  allLocalEmojis,
  findLocalEmojiById,
  modifyCustomEmoji,
  presentEmoji,
  removeCustomEmoji,
} from '../../core/emojis/emojis.ts';
import type { CustomEmojiDoc } from '../../core/model/customEmojis.ts';
import { validationFailed } from '../../core/errors.ts';
import { formCheckbox, queryField } from '../forms.ts';
import { copyRemoteEmoji, listRemoteEmojis } from '../../core/emojis/emojiCopies.ts';
import { importEmojiArchive } from '../../core/emojis/emojiArchive.ts';
import { TarError } from '../../core/emojis/tarArchive.ts';

/** An emoji operation: its own errors are the form's message. */
const emojiOp = <T>(run: Promise<T>) => asValidation(run, EmojiError, TarError);

const customEmojiPages: AdminArea = (app, kit) => {
  const { core, asStaff, attempt, field, idParam } = kit;

  /** The local emojis, or other servers' (`remote`, of one `domain` if given), as the page lists them. */
  async function emojiList(remote: boolean, domain = '') {
    const docs = remote ? await listRemoteEmojis(core, { domain }) : await allLocalEmojis(core);
    const emojis = docs.map((doc) => ({ ...doc, id: String(doc._id), ...presentEmoji(core, doc) }));
    return { emojis, imported: null, remote, domain };
  }

  const listPage = listResource<CustomEmojiDoc>(app, kit, 'manage_custom_emojis', {
    paths: { list: '/admin/custom_emojis', action: '/admin/custom_emojis/:id/:action' },
    template: 'custom_emojis',
    load: (request: FastifyRequest) => {
      const domain = queryField(request, 'by_domain', 253);
      return emojiList(queryField(request, 'remote', 5) === '1' || domain !== '', domain);
    },
    create: (request) => {
      const image = request.uploads?.image;
      if (!image?.data.length) throw validationFailed("Image can't be blank");
      return emojiOp(
        addCustomEmoji(core, {
          shortcode: field(request, 'shortcode', 100).trim(),
          data: image.data,
          category: field(request, 'category', 100).trim() || null,
          visibleInPicker: formCheckbox(request, 'visible_in_picker'),
        }),
      );
    },
    find: (id) => findLocalEmojiById(core, id),
    actions: {
      enable: (emoji) => emojiOp(modifyCustomEmoji(core, emoji.shortcode, { disabled: false })),
      disable: (emoji) => emojiOp(modifyCustomEmoji(core, emoji.shortcode, { disabled: true })),
      category: (emoji, request) =>
        emojiOp(modifyCustomEmoji(core, emoji.shortcode, { category: field(request, 'category', 100).trim() || null })),
      delete: (emoji) => emojiOp(removeCustomEmoji(core, emoji.shortcode)),
    },
  });

  app.post(
    '/admin/custom_emojis/import',
    { preHandler: app.csrfProtection },
    asStaff('manage_custom_emojis', async (request, reply, me) => {
      const archive = request.uploads?.archive;
      let imported: { imported: number; skipped: number; failed: number } | null = null;
      const error = await attempt(async () => {
        if (!archive?.data.length) throw validationFailed("Archive can't be blank");
        const outcome = await emojiOp(
          importEmojiArchive(core, archive.data, {
            overwrite: formCheckbox(request, 'overwrite'),
            category: field(request, 'category', 100).trim() || null,
            visibleInPicker: formCheckbox(request, 'visible_in_picker'),
          }),
        );
        imported = { imported: outcome.imported, skipped: outcome.skipped, failed: outcome.failed.length };
      });
      return listPage(reply, me, error, { imported });
    }),
  );

  // Copying another server's emoji: its entry is a remote one, so not among the list's actions.
  app.post(
    '/admin/custom_emojis/:id/copy',
    { preHandler: app.csrfProtection },
    asStaff('manage_custom_emojis', async (request, reply, me) => {
      const id = idParam(request);
      if (id === null) return reply.callNotFound();
      const error = await attempt(() => emojiOp(copyRemoteEmoji(core, id)));
      if (error) return listPage(reply, me, error, await emojiList(true));
      return reply.redirect('/admin/custom_emojis', 303);
    }),
  );
};

export default customEmojiPages;
