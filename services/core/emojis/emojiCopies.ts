// Custom emojis taken from other servers or dropped in bulk, as Mastodon's admin does them:
// "Copy" of a remote emoji (CustomEmoji#copy!: a local emoji of the same shortcode gets its
// image) and `tootctl emoji purge [--remote-only]`.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { customEmojis, type CustomEmojiDoc } from '../model/customEmojis.ts';
import { storageFor } from '../media/storage.ts';
import { EmojiError, emojiListChanged, findLocalEmoji, importCustomEmoji } from './emojis.ts';
import { cacheRemoteEmoji } from './remoteEmojis.ts';

/** The remote emojis an admin may copy, newest first, optionally of one server (`by_domain`). */
export async function listRemoteEmojis(
  core: Core,
  opts: { domain?: string; limit?: number } = {},
): Promise<CustomEmojiDoc[]> {
  const domain = opts.domain?.trim().toLowerCase();
  return collection(core.db, customEmojis)
    .find(domain ? { domain } : { domain: { $ne: null } })
    .sort({ _id: -1 })
    .limit(opts.limit ?? 200)
    .toArray();
}

/**
 * Copies remote emoji `id` to a local one with its shortcode (replacing the image of a local one
 * that has it, which keeps its id, category and picker setting). The image is this server's copy,
 * fetched now through the SSRF-safe client if the media pipeline has not yet.
 */
export async function copyRemoteEmoji(core: Core, id: Id): Promise<CustomEmojiDoc> {
  const remote = await cacheRemoteEmoji(core, id);
  if (!remote || remote.domain === null) throw new EmojiError('No remote custom emoji with that id');
  const data = remote.imageKey ? await storageFor(core).get(remote.imageKey) : null;
  if (!data) throw new EmojiError(`The image of :${remote.shortcode}: could not be fetched from ${remote.domain}`);
  const local = await findLocalEmoji(core, remote.shortcode);
  await importCustomEmoji(core, {
    shortcode: remote.shortcode,
    data,
    category: local?.category ?? null,
    visibleInPicker: local?.visibleInPicker ?? true,
    overwrite: true,
  });
  const copy = await findLocalEmoji(core, remote.shortcode);
  if (!copy) throw new EmojiError(`:${remote.shortcode}: was not copied`);
  return copy;
}

/** `tootctl emoji purge`: every custom emoji (or only the remote ones) and its stored images. */
export async function purgeCustomEmojis(core: Core, opts: { remoteOnly: boolean }): Promise<number> {
  const coll = collection(core.db, customEmojis);
  const filter = opts.remoteOnly ? { domain: { $ne: null } } : {};
  const storage = storageFor(core);
  let removed = 0;
  for (;;) {
    const batch = await coll.find(filter).limit(500).toArray();
    if (batch.length === 0) break;
    await coll.deleteMany({ _id: { $in: batch.map((d) => d._id) } });
    for (const doc of batch)
      for (const key of [doc.imageKey, doc.staticKey]) if (key) await storage.delete(key).catch(() => undefined);
    removed += batch.length;
  }
  if (removed > 0) await emojiListChanged(core);
  return removed;
}
