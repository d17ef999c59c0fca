// Remote custom emojis (Mastodon keeps them in custom_emojis with their domain and downloads the
// image): the Emoji tags of remote actors and statuses are recorded per (shortcode, domain) with
// their remote image URL; the image is copied into our storage by the media pipeline
// (EmojiFetchRequested) through the SSRF-safe client, PNG or GIF up to 256 KB as for local ones,
// and a new URL makes the copy stale. Until copied, the entity points at GET /media_proxy/emojis/:id,
// which fetches it on first request.
import sharp from 'sharp';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import { customEmojis, type CustomEmojiDoc } from '../model/customEmojis.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import { randomFileName, storageFor } from '../media/storage.ts';
import { downloadRemoteFile } from '../media/remoteFile.ts';
import { EMOJI_SIZE_LIMIT, SHORTCODE_RE } from './emojis.ts';
import { statuses } from '../model/statuses.ts';
import { invalidateRenderedStatuses } from '../statuses/renderCache.ts';

/** Records the emojis a remote account of `domain` used; queues the copy of new or changed images. */
export async function upsertRemoteEmojis(
  core: Core,
  domain: string | null,
  tags: ReadonlyArray<{ shortcode: string; url: string }>,
): Promise<void> {
  if (domain === null || tags.length === 0) return;
  if ((await domainPolicy(core, domain)).rejectMedia) return;
  const coll = collection(core.db, customEmojis);
  const queue: string[] = [];
  for (const tag of tags.slice(0, 50)) {
    if (!SHORTCODE_RE.test(tag.shortcode) || !/^https?:\/\//i.test(tag.url) || tag.url.length > 2048) continue;
    const existing = await coll.findOne({ shortcode: tag.shortcode, domain });
    if (existing?.imageRemoteUrl === tag.url) continue;
    const now = new Date();
    if (existing) {
      await coll.updateOne(
        { _id: existing._id },
        { $set: { imageRemoteUrl: tag.url, imageKey: '', staticKey: '', updatedAt: now } },
      );
      await deleteCopy(core, existing);
      await forgetRenderingsWithEmoji(core, domain, tag.shortcode);
      queue.push(String(existing._id));
      continue;
    }
    const doc: CustomEmojiDoc = {
      _id: await nextSerialId(core.db, 'custom_emojis'),
      shortcode: tag.shortcode,
      domain,
      imageRemoteUrl: tag.url,
      imageKey: '',
      staticKey: '',
      contentType: 'image/png',
      size: 0,
      category: null,
      visibleInPicker: false,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    await insertOnce(coll, doc);
    queue.push(String(doc._id));
  }
  if (queue.length === 0) return;
  try {
    await core.outbox.publishDirect(
      queue.map((id) => ({ type: 'EmojiFetchRequested' as const, key: id, payload: { emojiId: id } })),
    );
  } catch (err) {
    // The media proxy fetches what the pipeline was not asked to.
    core.logger.warn({ err, domain }, 'emoji fetch not queued');
  }
}

async function deleteCopy(core: Core, doc: CustomEmojiDoc): Promise<void> {
  const storage = storageFor(core);
  for (const key of [doc.imageKey, doc.staticKey]) if (key) await storage.delete(key).catch(() => undefined);
}

/** Copies a remote emoji's image here unless done; returns the emoji as it is now. */
export async function cacheRemoteEmoji(core: Core, id: Id): Promise<CustomEmojiDoc | null> {
  const coll = collection(core.db, customEmojis);
  const doc = await coll.findOne({ _id: id });
  const url = doc?.imageRemoteUrl ?? null;
  if (!doc || doc.domain === null || url === null || doc.imageKey !== '') return doc;
  const data = await downloadRemoteFile(core, url, {
    maxBytes: EMOJI_SIZE_LIMIT,
    timeoutMs: 15_000,
    accept: 'image/*',
    domain: doc.domain,
    what: 'remote emoji',
    logFields: { emojiId: String(id) },
  });
  if (!data) return doc;
  const meta = await sharp(data, { animated: true, limitInputPixels: 4096 * 4096 })
    .metadata()
    .catch(() => null);
  if (!meta || (meta.format !== 'png' && meta.format !== 'gif')) {
    core.logger.info({ emojiId: String(id) }, 'remote emoji refused: not a PNG or GIF');
    return doc;
  }
  const still = await sharp(data, { pages: 1 })
    .resize(64, 64, { fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer()
    .catch(() => null);
  if (!still) return doc;
  const storage = storageFor(core);
  const imageKey = `custom_emojis/images/${id}/original/${randomFileName(meta.format)}`;
  const staticKey = `custom_emojis/images/${id}/static/${randomFileName('png')}`;
  await storage.put(imageKey, data, `image/${meta.format}`);
  await storage.put(staticKey, still, 'image/png');
  const updated = await coll.findOneAndUpdate(
    { _id: id, imageKey: '', imageRemoteUrl: url },
    {
      $set: { imageKey, staticKey, contentType: `image/${meta.format}`, size: data.length, updatedAt: new Date() },
    },
    { returnDocument: 'after' },
  );
  if (!updated) {
    await deleteCopy(core, { ...doc, imageKey, staticKey });
    return coll.findOne({ _id: id });
  }
  await forgetRenderingsWithEmoji(core, updated.domain, updated.shortcode);
  return updated;
}

/** How many of a server's statuses an emoji change looks through for cached renderings. */
const RENDERINGS_CHECKED = 2000;

/**
 * Cached renderings (statusPage.ts) carry each emoji's URL; when a remote emoji's image changes
 * (copied here, or replaced by its server, whose old copy is deleted) the renderings of that
 * server's statuses that use it are dropped, so none points at a copy that is gone. Looks through
 * the server's statuses by their `uri` index, at most RENDERINGS_CHECKED.
 */
async function forgetRenderingsWithEmoji(core: Core, domain: string | null, shortcode: string): Promise<void> {
  if (domain === null) return;
  const ids: Id[] = [];
  for (const scheme of ['https', 'http']) {
    const found = await collection(core.db, statuses)
      .find(
        {
          uri: { $gte: `${scheme}://${domain}/`, $lt: `${scheme}://${domain}0` },
          content: { $regex: `:${shortcode}:` },
        },
        { projection: { _id: 1 } },
      )
      .limit(RENDERINGS_CHECKED)
      .toArray();
    ids.push(...found.map((f) => f._id));
  }
  await invalidateRenderedStatuses(core, ids);
}

/** Where a remote emoji not copied yet is served. */
export function emojiProxyUrl(core: Core, id: Id, still = false): string {
  return `${core.config.baseUrl}/media_proxy/emojis/${id}${still ? '/static' : ''}`;
}
