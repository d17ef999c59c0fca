// A remote server's custom emoji as ingress records it, optionally with its image already copied
// into our storage (as the media pipeline does), for tests of copying and purging.
import type { Core } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { nextSerialId, type Id } from '../../services/core/ids.ts';
import { customEmojis } from '../../services/core/model/customEmojis.ts';
import { storageFor } from '../../services/core/media/storage.ts';
import { png } from './mediaFiles.ts';

export async function createRemoteEmoji(
  core: Core,
  shortcode: string,
  domain: string,
  opts: { cached: boolean },
): Promise<{ id: Id; imageKey: string }> {
  const id = await nextSerialId(core.db, 'custom_emojis');
  const imageKey = opts.cached ? `custom_emojis/images/${id}/original/${shortcode}.png` : '';
  if (opts.cached) await storageFor(core).put(imageKey, await png(48, 48), 'image/png');
  const now = new Date();
  await collection(core.db, customEmojis).insertOne({
    _id: id,
    shortcode,
    domain,
    imageRemoteUrl: `https://${domain}/emoji/${shortcode}.png`,
    imageKey,
    staticKey: imageKey,
    contentType: 'image/png',
    size: 100,
    category: null,
    visibleInPicker: true,
    disabled: false,
    createdAt: now,
    updatedAt: now,
  });
  return { id, imageKey };
}
