// Custom emojis: administrators add them (PNG or GIF, at most 256 KB, stored through the media
// storage with a static PNG beside), categorise, disable and remove them; `:shortcode:` in statuses,
// display names, notes and announcements becomes an `emojis` entry when an enabled emoji of the
// author's domain has that shortcode. The enabled local list is cached in Redis (it is read on
// every render that holds a `:shortcode:`) and rebuilt after each change.
import sharp from 'sharp';
import type { Core } from '../context.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { customEmojis, type CustomEmojiDoc } from '../model/customEmojis.ts';
import { storageFor, randomFileName } from '../media/storage.ts';
import { emojiProxyUrl } from './remoteEmojis.ts';

/** Mastodon's local emoji size limit. */
export const EMOJI_SIZE_LIMIT = 256 * 1024;
export const SHORTCODE_RE = /^[a-zA-Z0-9_]{2,128}$/;
export const CATEGORY_LIMIT = 64;
/** `:shortcode:` not glued to letters, digits or other colons (Mastodon's SCAN_RE). */
const SCAN_RE = /(?<=^|[^\p{L}\p{N}:]):([a-zA-Z0-9_]{2,128}):(?=$|[^\p{L}\p{N}:])/gu;

export interface CustomEmojiEntity {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
  category?: string | null;
}

export class EmojiError extends Error {}

const LIST_KEY = 'custom_emojis:local';
const LIST_SECONDS = 3600;

export function presentEmoji(core: Core, doc: CustomEmojiDoc, withCategory = true): CustomEmojiEntity {
  const storage = storageFor(core);
  // A remote emoji not copied here yet goes through the media proxy (remoteEmojis.ts).
  const copied = doc.imageKey !== '';
  const out: CustomEmojiEntity = {
    shortcode: doc.shortcode,
    url: copied ? storage.url(doc.imageKey) : emojiProxyUrl(core, doc._id),
    static_url: copied ? storage.url(doc.staticKey) : emojiProxyUrl(core, doc._id, true),
    visible_in_picker: doc.visibleInPicker,
  };
  if (withCategory) out.category = doc.category;
  return out;
}

/** GET /api/v1/custom_emojis: the enabled local emojis (also those hidden from the picker). */
export async function listCustomEmojis(core: Core): Promise<CustomEmojiEntity[]> {
  const hit = await core.redis.get(LIST_KEY);
  if (hit !== null) return JSON.parse(hit) as CustomEmojiEntity[];
  const docs = await collection(core.db, customEmojis)
    .find({ domain: null, disabled: false })
    .sort({ shortcode: 1 })
    .toArray();
  const list = docs.map((d) => presentEmoji(core, d));
  await core.redis.set(LIST_KEY, JSON.stringify(list), 'EX', LIST_SECONDS);
  return list;
}

/** Drops the cached emoji list (after any change of a local emoji). */
export async function emojiListChanged(core: Core): Promise<void> {
  await core.redis.del(LIST_KEY);
}

/** The shortcodes written in `texts`, each once, in order of appearance. */
export function shortcodesIn(texts: readonly string[]): string[] {
  const found = new Set<string>();
  for (const text of texts) if (text.includes(':')) for (const m of text.matchAll(SCAN_RE)) found.add(m[1]);
  return [...found];
}

/**
 * The CustomEmoji entries for the shortcodes in `texts` written by an account of `domain` (null:
 * local). Entities embedded in statuses and accounts carry no `category`, as Mastodon's.
 */
export async function emojisInTexts(
  core: Core,
  texts: readonly string[],
  domain: string | null = null,
): Promise<CustomEmojiEntity[]> {
  const codes = shortcodesIn(texts);
  if (codes.length === 0) return [];
  if (domain === null) {
    const byCode = new Map((await listCustomEmojis(core)).map((e) => [e.shortcode, e]));
    return codes
      .map((c) => byCode.get(c))
      .filter((e): e is CustomEmojiEntity => e !== undefined)
      .map(({ category: _category, ...rest }) => rest);
  }
  const docs = await collection(core.db, customEmojis)
    .find({ shortcode: { $in: codes }, domain, disabled: false })
    .toArray();
  return docs.map((d) => presentEmoji(core, d, false));
}

export async function findLocalEmoji(core: Core, shortcode: string): Promise<CustomEmojiDoc | null> {
  return collection(core.db, customEmojis).findOne({ shortcode, domain: null });
}

export async function findLocalEmojiById(core: Core, id: Id): Promise<CustomEmojiDoc | null> {
  return collection(core.db, customEmojis).findOne({ _id: id, domain: null });
}

/** The local emoji unless it is disabled (what /emojis/:id serves). */
export async function findEnabledLocalEmoji(core: Core, id: Id): Promise<CustomEmojiDoc | null> {
  return collection(core.db, customEmojis).findOne({ _id: id, domain: null, disabled: false });
}

function checkCategory(category: string | null | undefined): void {
  if (category && [...category].length > CATEGORY_LIMIT)
    throw new EmojiError(`Category is too long (maximum is ${CATEGORY_LIMIT} characters)`);
}

function checkShortcode(shortcode: string): void {
  if (!SHORTCODE_RE.test(shortcode))
    throw new EmojiError(
      'Shortcode must be at least 2 characters and only contain alphanumeric characters and underscores',
    );
}

type StoredImage = Pick<CustomEmojiDoc, 'imageKey' | 'staticKey' | 'contentType' | 'size'>;

/** Checks an emoji image (PNG or GIF, 256 KB) and stores it with its static PNG under `id`. */
async function storeEmojiImage(core: Core, id: Id, data: Buffer): Promise<StoredImage> {
  if (data.length > EMOJI_SIZE_LIMIT) throw new EmojiError('Image must be less than 256 KB');
  const meta = await sharp(data, { animated: true })
    .metadata()
    .catch(() => null);
  if (!meta || (meta.format !== 'png' && meta.format !== 'gif')) throw new EmojiError('Image must be a PNG or GIF');
  const ext = meta.format;
  const still = await sharp(data, { pages: 1 })
    .resize(64, 64, { fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer();
  const storage = storageFor(core);
  const imageKey = `custom_emojis/images/${id}/original/${randomFileName(ext)}`;
  const staticKey = `custom_emojis/images/${id}/static/${randomFileName('png')}`;
  await storage.put(imageKey, data, `image/${ext}`);
  await storage.put(staticKey, still, 'image/png');
  return { imageKey, staticKey, contentType: ext === 'png' ? 'image/png' : 'image/gif', size: data.length };
}

async function deleteEmojiImage(core: Core, keys: Pick<StoredImage, 'imageKey' | 'staticKey'>): Promise<void> {
  const storage = storageFor(core);
  await Promise.all([storage.delete(keys.imageKey), storage.delete(keys.staticKey)]).catch(() => undefined);
}

export async function addCustomEmoji(
  core: Core,
  input: { shortcode: string; data: Buffer; category?: string | null; visibleInPicker?: boolean },
): Promise<CustomEmojiDoc> {
  checkShortcode(input.shortcode);
  checkCategory(input.category);
  if (input.data.length > EMOJI_SIZE_LIMIT) throw new EmojiError('Image must be less than 256 KB');
  if (await findLocalEmoji(core, input.shortcode)) throw new EmojiError('Shortcode has already been taken');
  const id = await nextSerialId(core.db, 'custom_emojis');
  const image = await storeEmojiImage(core, id, input.data);
  const now = new Date();
  const doc: CustomEmojiDoc = {
    _id: id,
    shortcode: input.shortcode,
    domain: null,
    ...image,
    category: input.category ?? null,
    visibleInPicker: input.visibleInPicker ?? true,
    disabled: false,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await collection(core.db, customEmojis).insertOne(doc);
  } catch (err) {
    await deleteEmojiImage(core, image);
    if (isDuplicateKeyError(err)) throw new EmojiError('Shortcode has already been taken');
    throw err;
  }
  await emojiListChanged(core);
  return doc;
}

export type EmojiImportOutcome = 'imported' | 'skipped';

/**
 * One emoji of `tootctl emoji import`: a local emoji with that shortcode (any case) is skipped,
 * or with `overwrite` keeps its record (and so its id and ActivityPub URI) and gets the new image,
 * category and picker visibility; otherwise a new emoji is added.
 */
export async function importCustomEmoji(
  core: Core,
  input: { shortcode: string; data: Buffer; category: string | null; visibleInPicker: boolean; overwrite: boolean },
): Promise<EmojiImportOutcome> {
  checkShortcode(input.shortcode);
  checkCategory(input.category);
  // The shortcode was checked above, so it is safe inside a pattern.
  const existing = await collection(core.db, customEmojis).findOne({
    shortcode: { $regex: `^${input.shortcode}$`, $options: 'i' },
    domain: null,
  });
  if (!existing) {
    await addCustomEmoji(core, input);
    return 'imported';
  }
  if (!input.overwrite) return 'skipped';
  const image = await storeEmojiImage(core, existing._id, input.data);
  await collection(core.db, customEmojis).updateOne(
    { _id: existing._id },
    {
      $set: { ...image, category: input.category, visibleInPicker: input.visibleInPicker, updatedAt: new Date() },
    },
  );
  await deleteEmojiImage(core, existing);
  await emojiListChanged(core);
  return 'imported';
}

export async function modifyCustomEmoji(
  core: Core,
  shortcode: string,
  changes: { category?: string | null; disabled?: boolean; visibleInPicker?: boolean },
): Promise<CustomEmojiDoc> {
  checkCategory(changes.category);
  const set: Partial<CustomEmojiDoc> = { updatedAt: new Date() };
  if (changes.category !== undefined) set.category = changes.category || null;
  if (changes.disabled !== undefined) set.disabled = changes.disabled;
  if (changes.visibleInPicker !== undefined) set.visibleInPicker = changes.visibleInPicker;
  const doc = await collection(core.db, customEmojis).findOneAndUpdate(
    { shortcode, domain: null },
    { $set: set },
    { returnDocument: 'after' },
  );
  if (!doc) throw new EmojiError(`No custom emoji with shortcode ${shortcode}`);
  await emojiListChanged(core);
  return doc;
}

export async function removeCustomEmoji(core: Core, shortcode: string): Promise<void> {
  const doc = await collection(core.db, customEmojis).findOneAndDelete({ shortcode, domain: null });
  if (!doc) throw new EmojiError(`No custom emoji with shortcode ${shortcode}`);
  await emojiListChanged(core);
  await deleteEmojiImage(core, doc);
}

export async function allLocalEmojis(core: Core): Promise<CustomEmojiDoc[]> {
  return collection(core.db, customEmojis).find({ domain: null }).sort({ shortcode: 1 }).toArray();
}

/** ActivityPub id of a local emoji (served at that address as an `Emoji` object). */
export function emojiUri(core: Core, doc: Pick<CustomEmojiDoc, '_id'>): string {
  return `${core.config.baseUrl}/emojis/${doc._id}`;
}

/** The Emoji tags federation attaches to a local Note or actor for the shortcodes in `texts`. */
export async function emojiRefsInTexts(
  core: Core,
  texts: readonly string[],
): Promise<{ shortcode: string; url: string; mediaType: string; uri: string; updatedAt: Date }[]> {
  const codes = shortcodesIn(texts);
  if (codes.length === 0) return [];
  const docs = await collection(core.db, customEmojis)
    .find({ shortcode: { $in: codes }, domain: null, disabled: false })
    .toArray();
  const storage = storageFor(core);
  return docs.map((d) => ({
    shortcode: d.shortcode,
    url: storage.url(d.imageKey),
    mediaType: d.contentType,
    uri: emojiUri(core, d),
    updatedAt: d.updatedAt,
  }));
}
