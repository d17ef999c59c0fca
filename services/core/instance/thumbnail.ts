// The server thumbnail (Instance.thumbnail): an uploaded image stored through the media storage in
// two sizes, as Mastodon's site uploads (@1x 1200x630, @2x 2400x1260, PNG), with a blurhash.
import sharp from 'sharp';
import { encode as encodeBlurhash } from 'blurhash';
import type { Core } from '../context.ts';
import { storageFor, randomFileName } from '../media/storage.ts';
import { getInstanceSettings, setInstanceSettings } from './settings.ts';

export const THUMBNAIL_SIZE_LIMIT = 10 * 1024 * 1024;

export interface StoredThumbnail {
  /** Storage keys. */
  x1: string;
  x2: string;
  blurhash: string;
}

export class ThumbnailError extends Error {}

async function blurhashOf(data: Buffer): Promise<string> {
  const { data: pixels, info } = await sharp(data)
    .resize(32, 32, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return encodeBlurhash(new Uint8ClampedArray(pixels), info.width, info.height, 4, 4);
}

export async function setThumbnail(core: Core, data: Buffer): Promise<StoredThumbnail> {
  if (data.length > THUMBNAIL_SIZE_LIMIT) throw new ThumbnailError('Thumbnail is too big (10 MB at most)');
  const meta = await sharp(data)
    .metadata()
    .catch(() => null);
  if (!meta?.format || !['png', 'jpeg', 'gif', 'webp'].includes(meta.format))
    throw new ThumbnailError('Thumbnail must be a PNG, JPEG, GIF or WebP image');
  const storage = storageFor(core);
  const version = async (w: number, h: number) => {
    const png = await sharp(data).resize(w, h, { fit: 'inside', withoutEnlargement: true }).png().toBuffer();
    const key = `site_uploads/files/thumbnail/${w}x${h}/${randomFileName('png')}`;
    await storage.put(key, png, 'image/png');
    return key;
  };
  const stored = { x1: await version(1200, 630), x2: await version(2400, 1260), blurhash: await blurhashOf(data) };
  const previous = await getInstanceSettings(core);
  await setInstanceSettings(core, { thumbnailKey: JSON.stringify(stored) });
  const old = parseThumbnail(previous.thumbnailKey);
  if (old) await Promise.all([storage.delete(old.x1), storage.delete(old.x2)]).catch(() => undefined);
  return stored;
}

export async function clearThumbnail(core: Core): Promise<void> {
  const old = parseThumbnail((await getInstanceSettings(core)).thumbnailKey);
  await setInstanceSettings(core, { thumbnailKey: null });
  if (old) {
    const storage = storageFor(core);
    await Promise.all([storage.delete(old.x1), storage.delete(old.x2)]).catch(() => undefined);
  }
}

export function parseThumbnail(value: string | null): StoredThumbnail | null {
  if (!value) return null;
  try {
    const v = JSON.parse(value) as Partial<StoredThumbnail>;
    return typeof v.x1 === 'string' && typeof v.x2 === 'string'
      ? { x1: v.x1, x2: v.x2, blurhash: v.blurhash ?? '' }
      : null;
  } catch {
    return null;
  }
}

/** Instance.thumbnail for a stored thumbnail. */
export function thumbnailEntity(core: Core, stored: StoredThumbnail) {
  const storage = storageFor(core);
  return {
    url: storage.url(stored.x1),
    blurhash: stored.blurhash,
    versions: { '@1x': storage.url(stored.x1), '@2x': storage.url(stored.x2) },
  };
}
