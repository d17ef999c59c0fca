// Gathers from MongoDB what the pure renderers need: a local account's actor (image URLs) and a
// local status' Note (mentioned actors, parent id, attachments, poll counts, thread id). Used by
// the ActivityPub routes and by delivery.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc, type StoredImage } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { mediaAttachments } from '../../model/media.ts';
import { conversations } from '../../model/conversations.ts';
import { statusIdTimestamp } from '../../ids.ts';
import { storageFor } from '../../media/storage.ts';
import { attachmentToActivityPub, type ApDocument } from '../../media/activitypub.ts';
import { findPollByStatus, pollCounts } from '../../polls/polls.ts';
import { ensureAccountKeys } from '../keys.ts';
import { renderActor, type ActorInput, type ImageRef } from './actor.ts';
import { localConversationUri, renderNoteObject, type NoteInput } from './note.ts';
import type { JsonLd } from './context.ts';
import { contentTypeForKey } from '../../media/storage.ts';
import { emojiRefsInTexts } from '../../emojis/emojis.ts';
import { policyKeys } from '../../quotes/policy.ts';
import { AS_PUBLIC, quoteAuthorizationUri } from '../uris.ts';

function imageRef(core: Core, image: StoredImage | null, description: string | undefined): ImageRef | null {
  if (!image) return null;
  return {
    url: storageFor(core).url(image.path),
    mediaType: image.contentType || contentTypeForKey(image.path),
    description: description ?? '',
  };
}

export async function loadActorInput(core: Core, account: AccountDoc): Promise<ActorInput> {
  const keys = await ensureAccountKeys(core, account);
  let movedTo: string | null = null;
  if (account.movedToAccountId !== null) {
    const target = await collection(core.db, accounts).findOne(
      { _id: account.movedToAccountId },
      { projection: { uri: 1 } },
    );
    movedTo = target?.uri ?? null;
  }
  return {
    account: { ...account, publicKeyPem: keys.publicKeyPem },
    avatar: imageRef(core, account.avatar, account.avatarDescription),
    header: imageRef(core, account.header, account.headerDescription),
    alsoKnownAs: account.alsoKnownAs ?? [],
    movedTo,
    emojis: await emojiRefsInTexts(core, [
      account.displayName,
      account.note,
      ...account.fields.flatMap((f) => [f.name, f.value]),
    ]),
  };
}

export async function renderLocalActor(core: Core, account: AccountDoc): Promise<JsonLd> {
  return renderActor(core.config, await loadActorInput(core, account));
}

/** What renderNoteObject needs for a local (or any stored) status with its author. */
export async function loadNoteInput(core: Core, status: StatusDoc, author: AccountDoc): Promise<NoteInput> {
  const [parent, mentioned, media, poll, conversation, emojis, selfReplies] = await Promise.all([
    status.inReplyToId !== null
      ? collection(core.db, statuses).findOne({ _id: status.inReplyToId }, { projection: { uri: 1 } })
      : null,
    status.mentionedAccountIds.length > 0
      ? collection(core.db, accounts)
          .find({ _id: { $in: status.mentionedAccountIds } }, { projection: { uri: 1, username: 1, domain: 1 } })
          .toArray()
      : [],
    status.mediaIds.length > 0
      ? collection(core.db, mediaAttachments)
          .find({ _id: { $in: status.mediaIds } })
          .toArray()
      : [],
    status.pollId !== null ? findPollByStatus(core, status._id) : null,
    status.conversationId !== null ? collection(core.db, conversations).findOne({ _id: status.conversationId }) : null,
    author.domain === null ? emojiRefsInTexts(core, [status.spoilerText, status.content]) : [],
    author.domain === null ? loadSelfReplies(core, status, SELF_REPLIES_EMBEDDED) : [],
  ]);
  const byId = new Map(mentioned.map((a) => [a._id, a]));
  const mediaById = new Map(media.map((m) => [m._id, m]));
  const attachments = status.mediaIds
    .map((id) => mediaById.get(id))
    .map((m) => (m ? attachmentToActivityPub(core, m) : null))
    .filter((d): d is ApDocument => d !== null);
  const counts = poll ? await pollCounts(core, poll) : null;
  const quote = status.quote ? await loadQuoteRef(core, status) : null;
  return {
    quote,
    canQuoteAutomatically: author.domain === null ? automaticApprovalUris(status, author) : undefined,
    status,
    author: { uri: author.uri, followersUrl: author.followersUrl },
    inReplyToUri: parent?.uri ?? null,
    // Silent mentions (a quoted author) are delivered to but neither tagged nor addressed (Mastodon's
    // active_mentions).
    mentions: status.mentionedAccountIds
      .filter((id) => !status.silentMentionIds?.includes(id))
      .map((id) => byId.get(id))
      .filter((a): a is NonNullable<typeof a> => a !== undefined)
      .map((a) => ({ uri: a.uri, acct: a.domain ? `${a.username}@${a.domain}` : a.username })),
    attachments,
    poll: poll && counts ? { poll: { ...poll, votersCount: counts.votersCount }, tallies: counts.tallies } : null,
    conversation: conversation
      ? (conversation.uri ?? localConversationUri(core.config, conversation._id, conversation.createdAt))
      : // A local thread started since ADR 0009 has no document: its id is its root status's.
        status.conversationId !== null && author.domain === null
        ? localConversationUri(core.config, status.conversationId, statusIdTimestamp(status.conversationId))
        : null,
    emojis,
    selfReplies: selfReplies.map((r) => ({ id: r._id, uri: r.uri })),
  };
}

/** How many of the author's own replies the Note embeds (Mastodon's `self_replies(5)`). */
const SELF_REPLIES_EMBEDDED = 5;

/** The author's own public/unlisted replies to a status, oldest first (Mastodon's `self_replies`). */
export async function loadSelfReplies(
  core: Core,
  status: StatusDoc,
  limit: number,
): Promise<Array<Pick<StatusDoc, '_id' | 'uri'>>> {
  return collection(core.db, statuses)
    .find(
      {
        inReplyToId: status._id,
        accountId: status.accountId,
        deletedAt: null,
        visibility: { $in: ['public', 'unlisted'] },
      },
      { projection: { uri: 1 } },
    )
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();
}

/** The quoted status's addresses and the stamp approving the quote (ours for a local quoted status). */
async function loadQuoteRef(core: Core, status: StatusDoc): Promise<NoteInput['quote']> {
  const q = status.quote;
  if (!q) return null;
  const quoted =
    q.quotedStatusId === null
      ? null
      : await collection(core.db, statuses).findOne(
          { _id: q.quotedStatusId },
          { projection: { uri: 1, url: 1, local: 1, accountId: 1 } },
        );
  const uri = quoted?.uri ?? q.quotedUri;
  if (!uri) return null;
  let authorization: string | null = null;
  if (q.state === 'accepted' && quoted?.local && quoted.accountId !== status.accountId) {
    const quotedAuthor = await collection(core.db, accounts).findOne(
      { _id: quoted.accountId },
      { projection: { username: 1 } },
    );
    if (quotedAuthor) authorization = quoteAuthorizationUri(core.config, quotedAuthor.username, status._id);
  } else if (q.state === 'accepted') authorization = q.approvalUri;
  return { uri, url: quoted?.url ?? null, authorization };
}

/** Mastodon's outgoing `canQuote.automaticApproval`: public, followers, or the author alone. */
function automaticApprovalUris(status: StatusDoc, author: AccountDoc): string[] {
  const keys = policyKeys(status.quoteApprovalPolicy ?? 0, 'automatic');
  const out: string[] = [];
  if (keys.includes('public')) out.push(AS_PUBLIC);
  if (keys.includes('followers')) out.push(author.followersUrl);
  if (keys.includes('following') && author.followingUrl) out.push(author.followingUrl);
  if (out.length === 0) out.push(author.uri);
  return out;
}

export async function renderStatusObject(core: Core, status: StatusDoc, author: AccountDoc): Promise<JsonLd> {
  return renderNoteObject(core.config, await loadNoteInput(core, status, author));
}
