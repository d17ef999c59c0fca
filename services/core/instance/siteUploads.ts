// Site uploads, stored through the media storage as Mastodon's: the server thumbnail
// (Instance.thumbnail: @1x 1200x630 and @2x 2400x1260 PNGs with a blurhash) and the app icon
// (Instance.icon: square PNGs in nine sizes).
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

/** Refuses an uploaded site image (`what`: Thumbnail, Icon) over 10 MB or not in a web format. */
async function checkSiteImage(data: Buffer, what: string): Promise<void> {
  if (data.length > THUMBNAIL_SIZE_LIMIT) throw new ThumbnailError(`${what} is too big (10 MB at most)`);
  const meta = await sharp(data)
    .metadata()
    .catch(() => null);
  if (!meta?.format || !['png', 'jpeg', 'gif', 'webp'].includes(meta.format))
    throw new ThumbnailError(`${what} must be a PNG, JPEG, GIF or WebP image`);
}

export async function setThumbnail(core: Core, data: Buffer): Promise<StoredThumbnail> {
  await checkSiteImage(data, 'Thumbnail');
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

/** Mastodon's app icon sizes (SiteUpload::ANDROID_ICON_SIZES), square PNGs. */
export const ICON_SIZES = [36, 48, 72, 96, 144, 192, 256, 384, 512] as const;

/** Stores the app icon in every size; Instance.icon lists them. Returns the storage keys by size. */
export async function setAppIcon(core: Core, data: Buffer): Promise<Record<string, string>> {
  await checkSiteImage(data, 'Icon');
  const storage = storageFor(core);
  const keys: Record<string, string> = {};
  for (const size of ICON_SIZES) {
    const png = await sharp(data).resize(size, size, { fit: 'cover' }).png().toBuffer();
    const key = `site_uploads/files/app_icon/${size}/${randomFileName('png')}`;
    await storage.put(key, png, 'image/png');
    keys[String(size)] = key;
  }
  const previous = parseIcon((await getInstanceSettings(core)).appIconKeys);
  await setInstanceSettings(core, { appIconKeys: JSON.stringify(keys) });
  if (previous) await Promise.all(Object.values(previous).map((k) => storage.delete(k))).catch(() => undefined);
  return keys;
}

export function parseIcon(value: string | null): Record<string, string> | null {
  if (!value) return null;
  try {
    const v = JSON.parse(value) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return null;
  }
}

/** Instance.icon: `{src, size: "WxH"}` per stored size (none until an icon is uploaded). */
export function iconEntities(core: Core, value: string | null): { src: string; size: string }[] {
  const keys = parseIcon(value);
  if (!keys) return [];
  const storage = storageFor(core);
  return ICON_SIZES.filter((s) => keys[String(s)]).map((s) => ({
    src: storage.url(keys[String(s)]),
    size: `${s}x${s}`,
  }));
}
