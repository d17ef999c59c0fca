// Attachments and the statuses that carry them: checked for posting, attached, detached, held for
// a scheduled status, their attributes edited, and loaded for rendering.
import { invalidateRenderedStatuses } from '../statuses/renderCache.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { mediaAttachments, type MediaAttachmentDoc } from '../model/media.ts';
import { statuses } from '../model/statuses.ts';
import { notFound, validationFailed, unprocessable } from '../errors.ts';
import { MAX_ATTACHMENTS, parseFocus, normalizeDescription } from './attachments.ts';

/**
 * The attachments for a new or edited status, in the order given. 422 for more than four, and for
 * ids that are unknown, someone else's, attached to another live status, or not processed.
 * Media of a deleted status may be posted again (delete and redraft keeps the media, like Mastodon),
 * and so may media held by a scheduled status (the scheduler posts it that way).
 */
export async function loadAttachmentsForPosting(
  core: Core,
  accountId: Id,
  ids: Id[],
  opts: { statusId?: Id } = {},
): Promise<MediaAttachmentDoc[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  if (unique.length > MAX_ATTACHMENTS)
    throw validationFailed(`Media attachments can't be more than ${MAX_ATTACHMENTS}`);
  const found = await collection(core.db, mediaAttachments)
    .find({ _id: { $in: unique }, accountId })
    .toArray();
  const byId = new Map(found.map((d) => [d._id, d]));
  const elsewhere = [
    ...new Set(found.filter((d) => d.statusId !== null && d.statusId !== opts.statusId).map((d) => d.statusId as Id)),
  ];
  const deleted = new Set(
    elsewhere.length === 0
      ? []
      : (
          await collection(core.db, statuses)
            .find({ _id: { $in: elsewhere }, deletedAt: { $ne: null } }, { projection: { _id: 1 } })
            .toArray()
        ).map((s) => s._id),
  );
  const docs: MediaAttachmentDoc[] = [];
  for (const id of unique) {
    const doc = byId.get(id);
    if (!doc) throw validationFailed('Media attachments are invalid');
    if (doc.statusId !== null && doc.statusId !== opts.statusId && !deleted.has(doc.statusId))
      throw validationFailed('Media attachments are invalid');
    if (doc.processing === 'failed') throw validationFailed('Media attachments are invalid');
    if (doc.processing !== 'complete')
      throw unprocessable('Cannot attach files that have not finished processing. Try again in a moment!');
    docs.push(doc);
  }
  return docs;
}
/** Attaches media (checked by loadAttachmentsForPosting) to a just created or edited status. */
export async function attachToStatus(core: Core, ids: Id[], statusId: Id): Promise<void> {
  if (ids.length === 0) return;
  await collection(core.db, mediaAttachments).updateMany(
    { _id: { $in: ids } },
    { $set: { statusId, scheduledStatusId: null, updatedAt: new Date() } },
  );
}
/** Releases media an edit removed from a status (they become unattached, as Mastodon keeps them). */
export async function detachFromStatus(core: Core, ids: Id[], statusId: Id): Promise<void> {
  if (ids.length === 0) return;
  await collection(core.db, mediaAttachments).updateMany(
    { _id: { $in: ids }, statusId },
    { $set: { statusId: null, updatedAt: new Date() } },
  );
}
/** Reserves media for a scheduled status (they stay unattached until it is published). */
export async function holdForScheduledStatus(core: Core, ids: Id[], scheduledStatusId: Id): Promise<void> {
  if (ids.length === 0) return;
  await collection(core.db, mediaAttachments).updateMany(
    { _id: { $in: ids }, statusId: null },
    { $set: { scheduledStatusId, updatedAt: new Date() } },
  );
}
/** Description and focus edits: before posting, on a posted status's media and on a scheduled one's. */
export async function updateAttachmentAttributes(
  core: Core,
  accountId: Id,
  id: Id,
  attrs: { description?: unknown; focus?: unknown },
): Promise<MediaAttachmentDoc> {
  const set: Record<string, unknown> = { updatedAt: new Date() };
  const unset: Record<string, ''> = {};
  if (attrs.description !== undefined) set.description = normalizeDescription(attrs.description);
  if (attrs.focus !== undefined) {
    const focus = parseFocus(attrs.focus);
    if (focus) set['meta.focus'] = focus;
    else unset['meta.focus'] = '';
  }
  const coll = collection(core.db, mediaAttachments);
  const existing = await coll.findOne({ _id: id, accountId });
  if (!existing) throw notFound();
  // `meta` may be null (queued uploads); $set on a path under null fails, so start an object.
  if (set['meta.focus'] !== undefined && !existing.meta) {
    delete set['meta.focus'];
    set.meta = { focus: parseFocus(attrs.focus) };
  }
  if (unset['meta.focus'] !== undefined && !existing.meta) delete unset['meta.focus'];
  const update: Record<string, unknown> = { $set: set };
  if (Object.keys(unset).length > 0) update.$unset = unset;
  const doc = await coll.findOneAndUpdate({ _id: id, accountId }, update, { returnDocument: 'after' });
  if (!doc) throw notFound();
  await invalidateMediaStatus(core, doc);
  return doc;
}
/** A status's rendering shows its media: a change to attached media drops it from the cache. */
export async function invalidateMediaStatus(core: Core, doc: Pick<MediaAttachmentDoc, 'statusId'>): Promise<void> {
  if (doc.statusId !== null) await invalidateRenderedStatuses(core, [doc.statusId]);
}
/** Attachments by id, in the given order (missing ones skipped): for presenters. */
export function loadAttachments(core: Core, ids: Id[]): Promise<MediaAttachmentDoc[]> {
  return findInOrder(collection(core.db, mediaAttachments), ids);
}
