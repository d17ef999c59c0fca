// Avatar and header processing with sharp: orientation applied, cropped to Mastodon's sizes
// (avatar 400x400, header 1500x500), metadata stripped (sharp writes none unless asked), stored
// through the media storage. Animated GIFs stay animated with a static first frame beside them.
import sharp, { type Metadata } from 'sharp';
import type { Core } from '../context.ts';
import { ValidationError } from '../errors.ts';
import type { Id } from '../ids.ts';
import type { StoredImage } from '../model/accounts.ts';
import { storageFor, randomFileName } from '../media/storage.ts';

export type ProfileImageKind = 'avatar' | 'header';

export const PROFILE_IMAGE_MAX_BYTES = 8 * 1024 * 1024;
const SIZES: Record<ProfileImageKind, { width: number; height: number }> = {
  avatar: { width: 400, height: 400 },
  header: { width: 1500, height: 500 },
};
const ACCEPTED = new Set(['jpeg', 'png', 'gif', 'webp']);

export class ProfileImageError extends ValidationError {}

export async function storeProfileImage(
  core: Core,
  accountId: Id,
  kind: ProfileImageKind,
  data: Buffer,
): Promise<StoredImage> {
  const label = kind === 'avatar' ? 'Avatar' : 'Header';
  if (data.length > PROFILE_IMAGE_MAX_BYTES) throw new ProfileImageError(`${label} file size must be less than 8 MB`);
  let meta: Metadata;
  try {
    meta = await sharp(data, { limitInputPixels: 33_177_600 }).metadata();
  } catch {
    throw new ProfileImageError(`${label} has contents that are not what they are reported to be`);
  }
  if (!meta.format || !ACCEPTED.has(meta.format)) throw new ProfileImageError(`${label} file type is not supported`);
  const { width, height } = SIZES[kind];
  const animated = meta.format === 'gif' && (meta.pages ?? 1) > 1;
  const storage = storageFor(core);
  const dir = `accounts/${kind}s/${accountId}/original`;
  // Cropped to exactly this size, like Paperclip's `400x400#` / `1500x500#` geometries.
  const resize = { width, height, fit: 'cover' as const };
  try {
    if (animated) {
      const gif = await sharp(data, { animated: true }).resize(resize).gif().toBuffer();
      const still = await sharp(data).rotate().resize(resize).png().toBuffer();
      const path = `${dir}/${randomFileName('gif')}`;
      const staticPath = `accounts/${kind}s/${accountId}/static/${randomFileName('png')}`;
      await storage.put(path, gif, 'image/gif');
      await storage.put(staticPath, still, 'image/png');
      return { path, staticPath, contentType: 'image/gif' };
    }
    const pipeline = sharp(data).rotate().resize(resize);
    const [ext, type, out] =
      meta.format === 'png' || meta.format === 'gif'
        ? (['png', 'image/png', await pipeline.png().toBuffer()] as const)
        : meta.format === 'webp'
          ? (['webp', 'image/webp', await pipeline.webp().toBuffer()] as const)
          : (['jpg', 'image/jpeg', await pipeline.jpeg({ quality: 90 }).toBuffer()] as const);
    const path = `${dir}/${randomFileName(ext)}`;
    await storage.put(path, out, type);
    return { path, staticPath: path, contentType: type };
  } catch (err) {
    if (err instanceof ProfileImageError) throw err;
    core.logger.warn({ err, accountId: String(accountId), kind }, 'profile image processing failed');
    throw new ProfileImageError(`${label} could not be processed`);
  }
}

/** Removes a replaced image's files; failures only leave garbage behind, so they are logged. */
export async function deleteProfileImage(core: Core, image: StoredImage | null): Promise<void> {
  if (!image) return;
  const storage = storageFor(core);
  for (const key of new Set([image.path, image.staticPath])) {
    await storage
      .delete(key)
      .catch((err: unknown) => core.logger.warn({ err, key }, 'could not delete a replaced profile image'));
  }
}
