// Remote media in our own storage (Mastodon's remote media cache): a remote attachment's file is
// downloaded through the SSRF-safe client within the type's size limit, processed like an upload
// (original, small thumbnail, blurhash, meta) and served from here, with `remote_url` kept. The
// media pipeline caches each new remote attachment; one not (or no longer) cached is fetched on
// first request by GET /media_proxy/:id (Mastodon's MediaProxyController); cached files older
// than MEDIA_CACHE_RETENTION_PERIOD days are removed by the scheduler or `cli media remove`.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { mediaAttachments, type MediaAttachmentDoc } from '../model/media.ts';
import { LIMITS } from '../instance/limits.ts';
import { invalidateRenderedStatuses } from '../statuses/renderCache.ts';
import { MediaRejectedError } from './errors.ts';
import { processMedia } from './process.ts';
import { storageFor } from './storage.ts';
import { downloadRemoteFile } from './remoteFile.ts';

const L = LIMITS.mediaAttachments;

/** Whether the attachment is remote and has no file here (Mastodon's `needs_redownload?`). */
export function needsRedownload(doc: Pick<MediaAttachmentDoc, 'remoteUrl' | 'files'>): boolean {
  return doc.remoteUrl !== null && doc.files.original === null;
}

/**
 * Downloads and processes a remote attachment's file unless it is cached already. Failures
 * (refused or unreachable server, too large, not media) leave it uncached and are logged: the
 * proxy tries again on the next request. Returns the attachment as it is now.
 */
export async function cacheRemoteAttachment(core: Core, id: Id): Promise<MediaAttachmentDoc | null> {
  const coll = collection(core.db, mediaAttachments);
  const doc = await coll.findOne({ _id: id });
  if (!doc || !doc.remoteUrl || !needsRedownload(doc) || doc.type === 'unknown') return doc;
  const data = await downloadRemoteFile(core, doc.remoteUrl, {
    maxBytes: doc.type === 'image' ? L.imageSizeLimit : L.videoSizeLimit,
    timeoutMs: 60_000,
    accept: '*/*',
    what: 'remote media',
    logFields: { mediaId: String(id) },
  });
  if (!data) return doc;
  const storage = storageFor(core);
  let processed;
  try {
    processed = await processMedia(storage, id, data);
  } catch (err) {
    if (!(err instanceof MediaRejectedError)) throw err;
    core.logger.info({ mediaId: String(id), problem: err.message }, 'remote media not cached: not acceptable');
    return doc;
  }
  const now = new Date();
  const cached = await coll.findOneAndUpdate(
    { _id: id, 'files.original': null },
    {
      $set: {
        type: processed.type,
        files: {
          original: processed.original,
          small: processed.small,
          contentType: processed.contentType,
          upload: null,
          fileSize: processed.fileSize,
        },
        meta: { ...processed.meta, ...(doc.meta?.focus ? { focus: doc.meta.focus } : {}) },
        blurhash: processed.blurhash ?? doc.blurhash,
        cachedAt: now,
        updatedAt: now,
      },
    },
    { returnDocument: 'after' },
  );
  if (!cached) {
    // Another process cached it meanwhile: ours are spare copies.
    for (const key of [processed.original, processed.small]) if (key) await storage.delete(key).catch(() => undefined);
    return coll.findOne({ _id: id });
  }
  if (cached.statusId !== null) await invalidateRenderedStatuses(core, [cached.statusId]);
  return cached;
}

/**
 * Removes the cached files of remote attachments cached before `before` (Mastodon's
 * `tootctl media remove` and media cache vacuum); the records stay with their `remote_url`, and
 * the proxy fetches them again when asked. Returns how many it uncached.
 */
export async function removeCachedRemoteMedia(
  core: Core,
  before: Date,
  opts: { limit?: number; onProgress?: (n: number) => void } = {},
): Promise<number> {
  const coll = collection(core.db, mediaAttachments);
  const storage = storageFor(core);
  const limit = opts.limit ?? Number.MAX_SAFE_INTEGER;
  let removed = 0;
  while (removed < limit) {
    const batch = await coll
      .find({ cachedAt: { $lt: before } })
      .sort({ cachedAt: 1 })
      .limit(Math.min(200, limit - removed))
      .toArray();
    if (batch.length === 0) break;
    for (const doc of batch) {
      const res = await coll.updateOne(
        { _id: doc._id, cachedAt: doc.cachedAt },
        {
          $set: {
            files: { ...doc.files, original: null, small: null, fileSize: null },
            cachedAt: null,
            updatedAt: new Date(),
          },
        },
      );
      if (res.modifiedCount === 0) continue;
      for (const key of [doc.files.original, doc.files.small])
        if (key) await storage.delete(key).catch(() => undefined);
      if (doc.statusId !== null) await invalidateRenderedStatuses(core, [doc.statusId]);
      removed++;
    }
    opts.onProgress?.(removed);
  }
  return removed;
}

/** The scheduler's clean-up: files cached longer than MEDIA_CACHE_RETENTION_PERIOD days (if set). */
export async function vacuumMediaCache(core: Core, now = Date.now()): Promise<number> {
  const days = core.config.mediaCacheRetentionDays;
  if (days === null) return 0;
  return removeCachedRemoteMedia(core, new Date(now - days * 86_400_000), { limit: 1000 });
}
