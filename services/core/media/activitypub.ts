// Media attachments in ActivityPub (federation reference §4.2): our attachments as `Document`
// objects for outgoing Notes, and remote ones read from incoming objects. Remote files are not
// downloaded here: the media pipeline caches them (remoteCache.ts), the media proxy meanwhile.
import { isBlurhashValid } from 'blurhash';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { mediaAttachments, type MediaAttachmentDoc, type MediaType } from '../model/media.ts';
import { LIMITS } from '../instance/limits.ts';
import { storageFor } from './storage.ts';

export interface ApDocument {
  type: 'Document';
  mediaType: string | null;
  url: string;
  name: string | null;
  blurhash: string | null;
  focalPoint?: [number, number];
  width?: number;
  height?: number;
  icon?: { type: 'Image'; mediaType: string; url: string };
}

/** Our attachment as a Document; null while it is still processing (not publishable yet). */
export function attachmentToActivityPub(core: Core, doc: MediaAttachmentDoc): ApDocument | null {
  if (doc.processing !== 'complete') return null;
  const storage = storageFor(core);
  const url = doc.files.original ? storage.url(doc.files.original) : doc.remoteUrl;
  if (!url) return null;
  const out: ApDocument = {
    type: 'Document',
    mediaType: doc.files.contentType,
    url,
    name: doc.description,
    blurhash: doc.blurhash,
  };
  if (doc.meta?.focus) out.focalPoint = [doc.meta.focus.x, doc.meta.focus.y];
  if (doc.meta?.original?.width) {
    out.width = doc.meta.original.width;
    out.height = doc.meta.original.height;
  }
  if (doc.files.customThumbnail && doc.files.small)
    out.icon = { type: 'Image', mediaType: 'image/jpeg', url: storage.url(doc.files.small) };
  return out;
}

export interface RemoteAttachmentInput {
  type: MediaType;
  remoteUrl: string;
  previewRemoteUrl: string | null;
  mediaType: string | null;
  description: string | null;
  blurhash: string | null;
  focus: { x: number; y: number } | null;
  width: number | null;
  height: number | null;
}

function httpUrl(value: unknown): string | null {
  const pick = Array.isArray(value) ? value[0] : value;
  const raw =
    typeof pick === 'string'
      ? pick
      : pick && typeof pick === 'object'
        ? ((pick as { href?: unknown; url?: unknown }).href ?? (pick as { url?: unknown }).url)
        : null;
  if (typeof raw !== 'string' || raw.length > 2048) return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : null;
  } catch {
    return null;
  }
}

function mediaTypeOf(item: Record<string, unknown>): string | null {
  const direct = item.mediaType;
  if (typeof direct === 'string') return direct.toLowerCase().slice(0, 100);
  const link = Array.isArray(item.url) ? item.url[0] : item.url;
  const fromLink = link && typeof link === 'object' ? (link as { mediaType?: unknown }).mediaType : null;
  return typeof fromLink === 'string' ? fromLink.toLowerCase().slice(0, 100) : null;
}

function typeOfMime(mime: string | null): MediaType {
  if (!mime) return 'unknown';
  if (/^image\/(jpeg|png|gif|webp|heic|heif|avif)$/.test(mime)) return 'image';
  if (/^video\/(mp4|webm|quicktime|ogg)$/.test(mime)) return 'video';
  if (/^audio\//.test(mime)) return 'audio';
  return 'unknown';
}

function blurhashOf(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 100 || !isBlurhashValid(value).result) return null;
  // Mastodon refuses hashes with more than 5 components per axis (expensive to decode).
  const sizeFlag = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~'.indexOf(
    value[0],
  );
  const x = (sizeFlag % 9) + 1;
  const y = Math.floor(sizeFlag / 9) + 1;
  return x <= 5 && y <= 5 ? value : null;
}

function focusOf(value: unknown): { x: number; y: number } | null {
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [x, y] = value.map(Number);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return null;
  const clamp = (n: number) => Math.max(-1, Math.min(1, n));
  return { x: clamp(x), y: clamp(y) };
}

function dimension(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 100_000 ? value : null;
}

/** One item of a remote object's `attachment`; null when it has no usable http(s) URL. */
export function remoteAttachmentFrom(item: unknown): RemoteAttachmentInput | null {
  if (!item || typeof item !== 'object') return null;
  const o = item as Record<string, unknown>;
  const remoteUrl = httpUrl(o.url);
  if (!remoteUrl) return null;
  const mediaType = mediaTypeOf(o);
  const alt =
    typeof o.summary === 'string' && o.summary.trim() !== '' ? o.summary : typeof o.name === 'string' ? o.name : null;
  const description =
    alt === null ? null : [...alt.trim()].slice(0, LIMITS.mediaAttachments.descriptionLimit).join('') || null;
  return {
    type: typeOfMime(mediaType),
    remoteUrl,
    previewRemoteUrl: httpUrl(o.icon),
    mediaType,
    description,
    blurhash: blurhashOf(o.blurhash),
    focus: focusOf(o.focalPoint),
    width: dimension(o.width),
    height: dimension(o.height),
  };
}

/** Records the attachments of a remote status (first four usable ones), in order. */
export async function createRemoteAttachments(
  core: Core,
  accountId: Id,
  items: unknown[],
): Promise<MediaAttachmentDoc[]> {
  const inputs = items
    .map(remoteAttachmentFrom)
    .filter((i): i is RemoteAttachmentInput => i !== null)
    .slice(0, LIMITS.statuses.maxMediaAttachments);
  const docs: MediaAttachmentDoc[] = [];
  for (const input of inputs) {
    const now = new Date();
    const w = input.width;
    const h = input.height;
    const doc: MediaAttachmentDoc = {
      _id: await nextSerialId(core.db, 'media_attachments'),
      accountId,
      statusId: null,
      scheduledStatusId: null,
      type: input.type,
      processing: 'complete',
      processingError: null,
      files: { original: null, small: null, contentType: input.mediaType, upload: null, fileSize: null },
      meta:
        w && h
          ? {
              original: { width: w, height: h, size: `${w}x${h}`, aspect: w / h },
              ...(input.focus ? { focus: input.focus } : {}),
            }
          : input.focus
            ? { focus: input.focus }
            : null,
      description: input.description,
      blurhash: input.blurhash,
      remoteUrl: input.remoteUrl,
      previewRemoteUrl: input.previewRemoteUrl,
      createdAt: now,
      updatedAt: now,
    };
    docs.push(doc);
  }
  if (docs.length === 0) return docs;
  // The media pipeline copies each file here (remoteCache.ts); until then the media proxy serves it.
  const cacheable = docs.filter((d) => d.type !== 'unknown');
  await core.outbox.write(
    cacheable.map((d) => ({
      type: 'MediaProcessRequested' as const,
      key: String(accountId),
      payload: { mediaId: String(d._id), accountId: String(accountId) },
      verify: { collection: mediaAttachments.name, filter: { _id: d._id }, expect: 'exists' as const },
    })),
    async () => {
      await collection(core.db, mediaAttachments).insertMany(docs);
    },
  );
  return docs;
}
