// Custom emojis (manage_custom_emojis, Mastodon's /admin/custom_emojis): the local emojis with
// their image, category and state; one uploaded (PNG or GIF), enabled, disabled, moved to another
// category or deleted through the same core operations as `tootctl emoji`.
import { listResource, type AdminArea } from './kit.ts';
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

const customEmojiPages: AdminArea = (app, kit) => {
  const { core, field } = kit;
  listResource(app, kit, {
    permission: 'manage_custom_emojis',
    paths: { list: '/admin/custom_emojis', action: '/admin/custom_emojis/:id/:action' },
    template: 'custom_emojis',
    title: 'admin.custom_emojis.title',
    load: async () => ({
      emojis: (await allLocalEmojis(core)).map((doc) => ({ ...doc, id: String(doc._id), ...presentEmoji(core, doc) })),
    }),
    create: (request) => {
      const image = request.uploads?.image;
      if (!image?.data.length) throw validationFailed("Image can't be blank");
      return asValidation(
        addCustomEmoji(core, {
          shortcode: field(request, 'shortcode', 100).trim(),
          data: image.data,
          category: field(request, 'category', 100).trim() || null,
          visibleInPicker: formCheckbox(request, 'visible_in_picker'),
        }),
      );
    },
    // Local emojis only; the actions work on the shortcode, as `tootctl emoji` does.
    find: (id) => collection(core.db, customEmojis).findOne({ _id: id, domain: null }),
    actions: {
      enable: (emoji) => asValidation(modifyCustomEmoji(core, emoji.shortcode, { disabled: false })),
      disable: (emoji) => asValidation(modifyCustomEmoji(core, emoji.shortcode, { disabled: true })),
      category: (emoji, request) =>
        asValidation(
          modifyCustomEmoji(core, emoji.shortcode, { category: field(request, 'category', 100).trim() || null }),
        ),
      delete: (emoji) => asValidation(removeCustomEmoji(core, emoji.shortcode)),
    },
  });
};

export default customEmojiPages;
