// Removing local media with their files: one attachment its owner deletes, the uploads nobody
// attached within a day, and (DELETE /api/v1/statuses/:id?delete_media=true) a deleted status's media.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { mediaAttachments, type MediaAttachmentDoc } from '../model/media.ts';
import { unprocessable } from '../errors.ts';
import { storageFor } from './storage.ts';
import { findOwnMedia } from './attachments.ts';

function fileKeys(doc: MediaAttachmentDoc): string[] {
  return [doc.files.original, doc.files.small, doc.files.upload].filter((k): k is string => typeof k === 'string');
}

/** DELETE /api/v1/media/:id: only media no status uses (422 otherwise, like Mastodon 4.4). */
export async function deleteMediaAttachment(core: Core, accountId: Id, id: Id): Promise<void> {
  const doc = await findOwnMedia(core, accountId, id);
  if (doc.statusId !== null || doc.scheduledStatusId !== null)
    throw unprocessable('Media attachment is currently used by a status');
  const res = await collection(core.db, mediaAttachments).deleteOne({
    _id: id,
    accountId,
    statusId: null,
    scheduledStatusId: null,
  });
  if (res.deletedCount === 0) throw unprocessable('Media attachment is currently used by a status');
  const storage = storageFor(core);
  await Promise.all(fileKeys(doc).map((k) => storage.delete(k).catch(() => undefined)));
}

/**
 * Removes local uploads nobody attached within `olderThanMs` (Mastodon: a day) with their files.
 * Returns how many it removed. Idempotent; safe in several processes.
 */
export async function removeUnattachedMedia(core: Core, olderThanMs = 24 * 3600_000, limit = 500): Promise<number> {
  const coll = collection(core.db, mediaAttachments);
  const stale = await coll
    .find({
      statusId: null,
      scheduledStatusId: null,
      remoteUrl: null,
      createdAt: { $lt: new Date(Date.now() - olderThanMs) },
    })
    .limit(limit)
    .toArray();
  const storage = storageFor(core);
  let removed = 0;
  for (const doc of stale) {
    const res = await coll.deleteOne({ _id: doc._id, statusId: null, scheduledStatusId: null });
    if (res.deletedCount === 0) continue;
    await Promise.all(fileKeys(doc).map((k) => storage.delete(k).catch(() => undefined)));
    removed++;
  }
  return removed;
}

/**
 * The media of a status its author just deleted, removed now with their files instead of being kept
 * a day for a redraft (Mastodon 4.4's `delete_media`). Returns how many went.
 */
export async function removeMediaOfDeletedStatus(core: Core, accountId: Id, statusId: Id): Promise<number> {
  const coll = collection(core.db, mediaAttachments);
  const docs = await coll.find({ statusId, accountId, remoteUrl: null }).toArray();
  if (docs.length === 0) return 0;
  await coll.deleteMany({ _id: { $in: docs.map((d) => d._id) }, statusId });
  const storage = storageFor(core);
  await Promise.all(docs.flatMap(fileKeys).map((k) => storage.delete(k).catch(() => undefined)));
  return docs.length;
}
