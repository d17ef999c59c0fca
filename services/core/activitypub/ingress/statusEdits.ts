// Update and Delete of remote statuses (federation reference §6.5): an edit keeps the earlier
// versions as status edits (Mastodon's status_edits), a Delete removes the status as a local delete does.
import type { Core } from '../../context.ts';
import { nextSerialIds } from '../../ids.ts';
import { collection } from '../../db/mongo.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { mediaAttachments } from '../../model/media.ts';
import { statusEdits, type StatusEditDoc } from '../../model/statusEdits.ts';
import { createRemoteAttachments } from '../../media/activitypub.ts';
import { remotePollFrom, upsertRemotePoll } from '../../polls/activitypub.ts';
import { tagNamesOf } from '../../statuses/entities.ts';
import { statusUpdatedEvent } from '../../statuses/events.ts';
import { deleteStatus } from '../../statuses/deleteStatus.ts';
import { emojiTagsOf } from '../actors.ts';
import { upsertRemoteEmojis } from '../../emojis/remoteEmojis.ts';
import { asArray, typeIs, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import { plainText } from '../sanitize.ts';
import { audiencesOf, type Audience } from './audience.ts';
import { policyFromInteractionPolicy } from '../../quotes/policy.ts';
import { markDeleted } from './deleteMarkers.ts';
import { contentOf, date, NOTE_TYPES } from './statuses.ts';
import { keptSilentMentions } from '../../statuses/postStatus.ts';

/** What an edit of a remote status is made of, once its lookups are done (one edit or a batch's). */
export interface RemoteEditParts {
  status: StatusDoc;
  actor: AccountDoc;
  object: JsonObject;
  audience: Audience;
  mediaIds: bigint[];
  pollOptions: string[] | null;
  updated: Date;
  /** Ids for the history entries: two when the status had never been edited (its original first), else one. */
  historyIds: bigint[];
  now: Date;
}
/**
 * The edited status and its new history entries: the one place updateRemoteStatus and its bulk
 * form make them. Visibility never changes.
 */
export function remoteEdit(p: RemoteEditParts): { next: StatusDoc; edits: StatusEditDoc[] } {
  const { status, object, updated } = p;
  const { html, language } = contentOf(object);
  const spoilerText = typeIs(object, ...NOTE_TYPES) ? plainText(object.summary, 5000) : '';
  const next: StatusDoc = {
    ...status,
    content: html,
    spoilerText,
    sensitive: object.sensitive === true || spoilerText !== '',
    language: language ?? status.language,
    mentions: p.audience.mentions,
    // A silent mention (the quoted author's access) outlives the edit.
    ...keptSilentMentions(
      status,
      p.audience.mentions.map((m) => m.accountId),
    ),
    tags: p.audience.tags,
    tagNames: tagNamesOf(p.audience.tags),
    mediaIds: p.mediaIds,
    // The author may have changed who can quote it.
    quoteApprovalPolicy: policyFromInteractionPolicy(object.interactionPolicy, p.actor),
    editedAt: updated,
    updatedAt: p.now,
  };
  const entry = (id: bigint, of: StatusDoc, pollOptions: string[] | null, createdAt: Date): StatusEditDoc => ({
    _id: id,
    statusId: status._id,
    accountId: status.accountId,
    text: '',
    content: of.content,
    spoilerText: of.spoilerText,
    sensitive: of.sensitive,
    mediaIds: of.mediaIds,
    pollOptions,
    createdAt,
  });
  const ids = [...p.historyIds];
  const edits: StatusEditDoc[] = [];
  // The original becomes the first entry of the history when the status is first edited.
  if (status.editedAt === null) edits.push(entry(ids.shift()!, status, null, status.createdAt));
  edits.push(entry(ids.shift()!, next, p.pollOptions, updated));
  return { next, edits };
}
/**
 * Update{Note|Question}: an edit (newer `updated`: text, CW, media, poll options, tags, mentions,
 * with history) or an implicit update (poll tallies only). Visibility never changes.
 */
export async function updateRemoteStatus(core: Core, actor: AccountDoc, object: JsonObject): Promise<void> {
  const uri = typeof object.id === 'string' ? object.id : null;
  if (!uri || hostOf(uri) !== hostOf(actor.uri)) return;
  const status = await collection(core.db, statuses).findOne({ uri, deletedAt: null });
  if (!status || status.accountId !== actor._id || status.local) return;
  const poll = typeIs(object, 'Question') ? remotePollFrom(object) : null;
  const updated = date(object.updated);
  const lastEdit = status.editedAt ?? status.createdAt;
  await upsertRemoteEmojis(core, actor.domain, emojiTagsOf(object));
  if (!updated || updated.getTime() <= lastEdit.getTime()) {
    // Implicit update: poll counts only.
    if (poll && status.pollId) await upsertRemotePoll(core, status._id, actor._id, poll);
    return;
  }
  const [{ mentions, tags }] = await audiencesOf(core, [object]);
  const media = await createRemoteAttachments(core, actor._id, asArray(object.attachment));
  const historyIds = await nextSerialIds(core.db, 'status_edits', status.editedAt === null ? 2 : 1);
  const { next, edits } = remoteEdit({
    status,
    actor,
    object,
    audience: { mentions, tags },
    mediaIds: media.map((m) => m._id),
    pollOptions: poll?.options ?? null,
    updated,
    historyIds,
    now: new Date(),
  });
  await core.outbox.write([statusUpdatedEvent(next, updated, poll !== null || status.pollId !== null)], async () => {
    if (poll) next.pollId = (await upsertRemotePoll(core, status._id, actor._id, poll))._id;
    await collection(core.db, mediaAttachments).updateMany(
      { _id: { $in: next.mediaIds } },
      { $set: { statusId: status._id } },
    );
    await collection(core.db, statusEdits).insertMany(edits);
    const { _id, ...fields } = next;
    await collection(core.db, statuses).updateOne({ _id }, { $set: fields });
  });
}
/** Delete of a status: the actor's own only; unknown ones get a marker against a late Create. */
export async function deleteRemoteStatus(core: Core, actor: AccountDoc, uri: string): Promise<void> {
  if (hostOf(uri) !== hostOf(actor.uri)) return;
  const status = await collection(core.db, statuses).findOne({ uri, deletedAt: null });
  if (!status) {
    await markDeleted(core, uri);
    return;
  }
  if (status.accountId !== actor._id) return;
  await deleteStatus(core, actor, status._id);
}
