// Editing a local status (Mastodon's UpdateStatusService): text, content warning, sensitivity,
// language, media (and their descriptions/focus), poll (votes reset when it changes). Every edit
// keeps a revision; the first edit also keeps the original. Visibility never changes.
import { invalidateRenderedStatuses } from './renderCache.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { statusEdits, type StatusEditDoc } from '../model/statusEdits.ts';
import { LIMITS } from '../instance/limits.ts';
import { processStatusText, tagNamesOf } from './entities.ts';
import { statusNotFound, statusValidation } from './errors.ts';
import { checkLength, normaliseLanguage, withQuotedAccess } from './postStatus.ts';
import {
  attachMedia,
  checkMediaForPosting,
  detachMedia,
  checkPollInput,
  pollOptionTitles,
  replaceStatusPoll,
  updateMediaAttributes,
  type MediaAttributesInput,
  type PollInput,
} from './attachments.ts';
import { statusUpdatedEvent } from './events.ts';

export interface EditStatusInput {
  text: string;
  spoilerText: string;
  sensitive: boolean | null;
  language: string | null;
  mediaIds: Id[];
  mediaAttributes: MediaAttributesInput[];
  poll: PollInput | null;
}

async function snapshot(core: Core, s: StatusDoc, at: Date): Promise<StatusEditDoc> {
  return {
    _id: await nextSerialId(core.db, 'status_edits'),
    statusId: s._id,
    accountId: s.accountId,
    text: s.text,
    content: s.content,
    spoilerText: s.spoilerText,
    sensitive: s.sensitive,
    mediaIds: s.mediaIds,
    pollOptions: await pollOptionTitles(core, s.pollId),
    createdAt: at,
  };
}

export async function editStatus(
  core: Core,
  author: AccountDoc,
  statusId: Id,
  input: EditStatusInput,
): Promise<StatusDoc> {
  const coll = collection(core.db, statuses);
  const status = await coll.findOne({ _id: statusId, deletedAt: null });
  if (!status || status.accountId !== author._id || status.reblogOfId !== null) throw statusNotFound();

  const spoilerText = input.spoilerText.trim();
  if (input.text.trim() === '' && input.mediaIds.length === 0 && !input.poll)
    throw statusValidation("Text can't be blank");
  if (input.mediaIds.length > 0 && input.poll)
    throw statusValidation('Media attachments cannot be combined with a poll');
  if (input.mediaIds.length > LIMITS.statuses.maxMediaAttachments) {
    throw statusValidation(`Media attachments can have at most ${LIMITS.statuses.maxMediaAttachments} items`);
  }
  checkLength(input.text, spoilerText);
  const poll = input.poll ? checkPollInput(input.poll) : null;
  const media = await checkMediaForPosting(core, author._id, input.mediaIds, status._id);
  const removedMedia = status.mediaIds.filter((id) => !media.includes(id));
  const unknownAttrs = input.mediaAttributes.filter((a) => !input.mediaIds.includes(a.id));
  if (unknownAttrs.length > 0) throw statusValidation('Media attachments are invalid');
  const processed = await processStatusText(core, input.text);

  const editedAt = new Date();
  const edits: StatusEditDoc[] = [];
  if (status.editedAt === null) edits.push(await snapshot(core, status, status.createdAt));

  const updated: StatusDoc = {
    ...status,
    text: input.text,
    content: processed.content,
    spoilerText,
    // Mastodon's UpdateStatusService: `sensitive || spoiler_text.present?` (not given = false).
    sensitive: (input.sensitive ?? false) || spoilerText !== '',
    language: normaliseLanguage(input.language) ?? status.language,
    mentions: processed.mentions,
    silentMentionIds: [],
    ...withQuotedAccess(
      processed.mentions.map((m) => m.accountId),
      status.accountId,
      status.quote ?? null,
    ),
    tags: processed.tags,
    tagNames: tagNamesOf(processed.tags),
    mediaIds: media,
    editedAt,
    updatedAt: editedAt,
  };
  const pollChanged = input.poll !== null || status.pollId !== null;

  await core.outbox.write([statusUpdatedEvent(updated, editedAt, pollChanged)], async () => {
    await attachMedia(core, media, status._id);
    await detachMedia(core, removedMedia, status._id);
    if (input.mediaAttributes.length > 0) await updateMediaAttributes(core, author._id, input.mediaAttributes);
    if (pollChanged) updated.pollId = await replaceStatusPoll(core, status._id, author._id, status.pollId, poll);
    edits.push(await snapshot(core, updated, editedAt));
    await collection(core.db, statusEdits).insertMany(edits);
    const { _id, ...fields } = updated;
    await coll.updateOne({ _id }, { $set: fields });
  });
  await invalidateRenderedStatuses(core, [status._id]);
  return updated;
}

/** Revisions oldest first; an unedited status has one (itself). */
export async function statusHistory(core: Core, status: StatusDoc): Promise<StatusEditDoc[]> {
  const edits = await collection(core.db, statusEdits).find({ statusId: status._id }).sort({ _id: 1 }).toArray();
  if (edits.length > 0) return edits;
  return [await snapshot(core, status, status.createdAt)];
}
