// Media attachments: upload, processing by the media pipeline, attaching to statuses and the
// attribute edits (description, focus) allowed before and after posting.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { mediaAttachments, type MediaAttachmentDoc, type MediaMeta, type MediaType } from '../model/media.ts';
import { LIMITS } from '../instance/limits.ts';
import { notFound, validationFailed } from '../errors.ts';
import { storageFor, randomFileName, type MediaStorage } from './storage.ts';
import { MediaRejectedError } from './errors.ts';
import {
  inspectUpload,
  processMedia,
  processThumbnail,
  processedInline,
  mediaKeyPrefix,
  type ProcessedMedia,
  type SniffedKind,
} from './process.ts';
import { invalidateMediaStatus } from './statusAttachments.ts';

export const MAX_ATTACHMENTS = LIMITS.statuses.maxMediaAttachments;

export interface MediaAttributes {
  description?: string | null;
  /** Parsed focus point; see parseFocus. */
  focus?: { x: number; y: number } | null;
}

/** Mastodon's `focus` parameter: "x,y" with both in -1.0..1.0. Null for absent/empty. */
export function parseFocus(value: unknown): { x: number; y: number } | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw validationFailed('Focus is invalid');
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(value);
  if (!m) throw validationFailed('Focus is invalid');
  const x = Number(m[1]);
  const y = Number(m[2]);
  if (!(x >= -1 && x <= 1 && y >= -1 && y <= 1)) throw validationFailed('Focus must be between -1.0 and 1.0');
  return { x, y };
}

/** Description (alt text): plain text up to the instance limit; "" means none. */
export function normalizeDescription(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validationFailed('Description is invalid');
  const text = value.replace(/\r\n?/g, '\n');
  if ([...text].length > LIMITS.mediaAttachments.descriptionLimit) {
    throw validationFailed(
      `Description is too long (maximum is ${LIMITS.mediaAttachments.descriptionLimit} characters)`,
    );
  }
  return text === '' ? null : text;
}

function typeOfKind(kind: SniffedKind): MediaType {
  switch (kind) {
    case 'image':
      return 'image';
    case 'animated-gif':
      return 'gifv';
    case 'video':
      return 'video';
    case 'audio':
      return 'audio';
  }
}

export interface UploadOptions {
  description?: unknown;
  focus?: unknown;
  /** Custom preview image for audio and video (Mastodon's `thumbnail`). */
  thumbnail?: Buffer | null;
  /** v1 upload: always process before answering. v2: images inline, the rest through the pipeline. */
  synchronous: boolean;
}

/** Stores and (inline or through the media pipeline) processes an upload of a local account. */
export async function createMediaAttachment(
  core: Core,
  accountId: Id,
  data: Buffer,
  opts: UploadOptions,
): Promise<MediaAttachmentDoc> {
  const description = normalizeDescription(opts.description);
  const focus = parseFocus(opts.focus);
  const sniffed = await inspectUpload(data);
  const id = await nextSerialId(core.db, 'media_attachments');
  const now = new Date();
  const coll = collection(core.db, mediaAttachments);
  const storage = storageFor(core);
  // A custom preview only makes sense for kinds without a picture of their own.
  const thumb = opts.thumbnail && sniffed.kind !== 'image' ? await processThumbnail(storage, id, opts.thumbnail) : null;
  const base: MediaAttachmentDoc = {
    _id: id,
    accountId,
    statusId: null,
    scheduledStatusId: null,
    type: typeOfKind(sniffed.kind),
    processing: 'queued',
    processingError: null,
    files: {
      original: null,
      small: thumb?.key ?? null,
      contentType: null,
      upload: null,
      fileSize: null,
      ...(thumb ? { customThumbnail: true } : {}),
    },
    meta: focus || thumb ? { ...(focus ? { focus } : {}), ...(thumb ? { small: thumb.dims } : {}) } : null,
    description,
    blurhash: thumb?.blurhash ?? null,
    remoteUrl: null,
    previewRemoteUrl: null,
    createdAt: now,
    updatedAt: now,
  };

  if (opts.synchronous || processedInline(sniffed.kind)) {
    const processed = await processMedia(storage, id, data);
    const doc: MediaAttachmentDoc = { ...base, ...(await finishedFields(storage, base, processed)) };
    await coll.insertOne(doc);
    return doc;
  }

  // Slow kinds: keep the raw upload where every media pipeline process can read it, then queue it.
  const uploadKey = `${mediaKeyPrefix(id)}/upload/${randomFileName('bin')}`;
  await storage.put(uploadKey, data, 'application/octet-stream');
  const doc: MediaAttachmentDoc = { ...base, files: { ...base.files, upload: uploadKey } };
  await core.outbox.write(
    [
      {
        type: 'MediaProcessRequested',
        key: String(accountId),
        payload: { mediaId: String(id), accountId: String(accountId) },
        verify: { collection: mediaAttachments.name, filter: { _id: id }, expect: 'exists' },
      },
    ],
    async () => {
      await coll.insertOne(doc);
    },
  );
  return doc;
}

/** The fields of a processed attachment; a custom thumbnail and the focus point survive processing. */
async function finishedFields(
  storage: MediaStorage,
  doc: MediaAttachmentDoc,
  p: ProcessedMedia,
): Promise<Partial<MediaAttachmentDoc>> {
  const custom = doc.files.customThumbnail === true && doc.files.small !== null;
  if (custom && p.small) await storage.delete(p.small).catch(() => undefined);
  const meta: MediaMeta = { ...p.meta };
  if (doc.meta?.focus) meta.focus = doc.meta.focus;
  if (custom && doc.meta?.small) meta.small = doc.meta.small;
  return {
    type: p.type,
    processing: 'complete',
    processingError: null,
    files: {
      original: p.original,
      small: custom ? doc.files.small : p.small,
      contentType: p.contentType,
      upload: null,
      fileSize: p.fileSize,
      ...(custom ? { customThumbnail: true } : {}),
    },
    meta,
    blurhash: custom ? doc.blurhash : p.blurhash,
  };
}

/** PUT /api/v1/media/:id with `thumbnail`: a new custom preview for audio or video. */
export async function setCustomThumbnail(core: Core, accountId: Id, id: Id, data: Buffer): Promise<MediaAttachmentDoc> {
  const doc = await findOwnMedia(core, accountId, id);
  if (doc.type === 'image') return doc;
  const storage = storageFor(core);
  const thumb = await processThumbnail(storage, id, data);
  const previous = doc.files.small;
  const updated = await collection(core.db, mediaAttachments).findOneAndUpdate(
    { _id: id, accountId },
    {
      $set: {
        'files.small': thumb.key,
        'files.customThumbnail': true,
        meta: { ...(doc.meta ?? {}), small: thumb.dims },
        blurhash: thumb.blurhash,
        updatedAt: new Date(),
      },
    },
    { returnDocument: 'after' },
  );
  if (previous && previous !== thumb.key) await storage.delete(previous).catch(() => undefined);
  if (!updated) throw notFound();
  await invalidateMediaStatus(core, updated);
  return updated;
}

/**
 * The media pipeline's job: processes a queued upload. Idempotent (a redelivered event for a
 * finished attachment does nothing). Returns the final state, or null when the record is gone.
 */
export async function processQueuedMedia(core: Core, mediaId: Id): Promise<MediaAttachmentDoc | null> {
  const coll = collection(core.db, mediaAttachments);
  const doc = await coll.findOne({ _id: mediaId });
  if (!doc) return null;
  if (doc.processing === 'complete' || doc.processing === 'failed') return doc;
  const storage = storageFor(core);
  const data = doc.files.upload ? await storage.get(doc.files.upload) : null;
  let update: Partial<MediaAttachmentDoc>;
  if (!data) {
    update = { processing: 'failed', processingError: 'File is missing' };
  } else {
    await coll.updateOne(
      { _id: mediaId, processing: 'queued' },
      { $set: { processing: 'in_progress', updatedAt: new Date() } },
    );
    try {
      update = await finishedFields(storage, doc, await processMedia(storage, mediaId, data));
    } catch (err) {
      if (!(err instanceof MediaRejectedError)) throw err;
      update = { processing: 'failed', processingError: err.message };
    }
  }
  const state = update.processing as 'complete' | 'failed';
  const finished = await core.outbox.write(
    [
      {
        type: 'MediaProcessed',
        key: String(doc.accountId),
        payload: {
          mediaId: String(mediaId),
          accountId: String(doc.accountId),
          mediaType: update.type ?? doc.type,
          state,
          statusId: doc.statusId === null ? null : String(doc.statusId),
        },
        verify: { collection: mediaAttachments.name, filter: { _id: mediaId, processing: state }, expect: 'exists' },
      },
    ],
    () =>
      coll.findOneAndUpdate(
        { _id: mediaId, processing: { $in: ['queued', 'in_progress'] } },
        { $set: { ...update, updatedAt: new Date() } },
        { returnDocument: 'after' },
      ),
  );
  if (doc.files.upload && finished) await storage.delete(doc.files.upload).catch(() => undefined);
  const result = finished ?? (await coll.findOne({ _id: mediaId }));
  if (result) await invalidateMediaStatus(core, result);
  return result;
}

/** An attachment of the account, or 404 (other users' media does not exist for the caller). */
export async function findOwnMedia(core: Core, accountId: Id, id: Id): Promise<MediaAttachmentDoc> {
  const doc = await collection(core.db, mediaAttachments).findOne({ _id: id, accountId });
  if (!doc) throw notFound();
  return doc;
}
