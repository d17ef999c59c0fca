// What GET /media_proxy/** serves (Mastodon's MediaProxyController): a remote attachment, profile
// image or custom emoji as a file of ours, fetched and stored first when it is not cached (or was
// removed by the cache clean-up). Each answers the stored file's key, or 404 for what is missing,
// local, suspended, disabled or not visible to the viewer.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { notFound } from '../errors.ts';
import { mediaAttachments } from '../model/media.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { customEmojis } from '../model/customEmojis.ts';
import { cacheRemoteEmoji } from '../emojis/remoteEmojis.ts';
import { findVisibleStatus } from '../statuses/visibility.ts';
import { cacheRemoteAttachment, needsRedownload } from './remoteCache.ts';
import { cacheRemoteProfileImage, cachedProfileImage } from './remoteProfileImages.ts';

/** An attachment's `original` or `small` file, for a viewer who may see its status. */
export async function proxiedAttachmentKey(
  core: Core,
  viewer: CachedAccount | null,
  id: Id,
  style: 'original' | 'small',
): Promise<string> {
  let doc = await collection(core.db, mediaAttachments).findOne({ _id: id });
  if (!doc || doc.statusId === null) throw notFound();
  if (!(await findVisibleStatus(core, viewer, doc.statusId))) throw notFound();
  if (needsRedownload(doc)) doc = await cacheRemoteAttachment(core, doc._id);
  const key = style === 'small' ? (doc?.files.small ?? doc?.files.original) : doc?.files.original;
  if (!key) throw notFound();
  return key;
}

/** A remote account's avatar or header (`still`: its first frame). */
export async function proxiedProfileImageKey(
  core: Core,
  id: Id,
  kind: 'avatar' | 'header',
  still: boolean,
): Promise<string> {
  const account = await collection(core.db, accounts).findOne({ _id: id });
  if (!account || account.domain === null || account.suspendedAt) throw notFound();
  const image = cachedProfileImage(account, kind) ?? (await cacheRemoteProfileImage(core, account._id, kind));
  if (!image) throw notFound();
  return still ? image.staticPath : image.path;
}

/** A remote custom emoji's image (`still`: its PNG). */
export async function proxiedEmojiKey(core: Core, id: Id, still: boolean): Promise<string> {
  const known = await collection(core.db, customEmojis).findOne({ _id: id });
  if (!known || known.domain === null || known.disabled) throw notFound();
  const emoji = known.imageKey !== '' ? known : await cacheRemoteEmoji(core, known._id);
  if (!emoji || emoji.imageKey === '') throw notFound();
  return still ? emoji.staticKey : emoji.imageKey;
}
