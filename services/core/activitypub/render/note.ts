// Notes and Questions (federation reference §4) from our statuses, and the audience rules of §6.2.
// Pure: `loadNoteInput` (load.ts) gathers what a status needs from MongoDB.
import type { Config } from '../../config.ts';
import type { StatusDoc, Visibility } from '../../model/statuses.ts';
import type { PollDoc } from '../../model/polls.ts';
import type { ApDocument } from '../../media/activitypub.ts';
import { AS_PUBLIC, statusLikesUri, statusRepliesUri, statusSharesUri, tagUrl } from '../uris.ts';
import { NOTE_CONTEXT, withContext, type JsonLd } from './context.ts';
import { renderEmoji, type EmojiRef } from './actor.ts';
import { repliesPageUri } from './collections.ts';

export interface Audience {
  to: string[];
  cc: string[];
}

/**
 * `to`/`cc` by visibility (Mastodon's TagManager): public → to Public, cc followers + mentions;
 * unlisted → to followers, cc Public + mentions; private → to followers, cc mentions; direct → to
 * mentions.
 */
export function audienceFor(visibility: Visibility, followersUri: string, mentionUris: string[]): Audience {
  const mentions = [...new Set(mentionUris)];
  switch (visibility) {
    case 'public':
      return { to: [AS_PUBLIC], cc: [followersUri, ...mentions] };
    case 'unlisted':
      return { to: [followersUri], cc: [AS_PUBLIC, ...mentions] };
    case 'private':
      return { to: [followersUri], cc: mentions };
    case 'direct':
      return { to: mentions, cc: [] };
  }
}

export interface MentionRef {
  /** Actor id of the mentioned account. */
  uri: string;
  /** `user` for accounts of ours, `user@domain` for remote ones. */
  acct: string;
}

export interface PollInput {
  poll: Pick<PollDoc, 'options' | 'multiple' | 'expiresAt' | 'closedAt' | 'votersCount'>;
  /** Votes per option. */
  tallies: number[];
}

export interface NoteInput {
  status: Pick<
    StatusDoc,
    | 'uri'
    | 'url'
    | 'content'
    | 'spoilerText'
    | 'sensitive'
    | 'language'
    | 'visibility'
    | 'createdAt'
    | 'editedAt'
    | 'tags'
    | 'favouritesCount'
    | 'reblogsCount'
  >;
  author: { uri: string; followersUrl: string };
  inReplyToUri: string | null;
  mentions: MentionRef[];
  attachments: ApDocument[];
  poll: PollInput | null;
  /** Thread id: the remote conversation URI, or a tag: URI for our own threads. */
  conversation: string | null;
  emojis?: EmojiRef[];
  /** Up to 5 of the author's own public/unlisted replies, oldest first (the embedded first page). */
  selfReplies?: Array<{ id: bigint; uri: string }>;
  /** What the status quotes: the quoted status's id and permalink, and the stamp approving it. */
  quote?: { uri: string; url: string | null; authorization: string | null } | null;
  /** Who may quote it without asking (`interactionPolicy.canQuote.automaticApproval`). */
  canQuoteAutomatically?: string[];
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Mastodon's `tag:` URI of a local thread. */
export function localConversationUri(config: Config, conversationId: bigint | string, createdAt: Date): string {
  return `tag:${config.localDomain.replace(/:\d+$/, '')},${createdAt.toISOString().slice(0, 10)}:objectId=${conversationId}:objectType=Conversation`;
}

/** The Note (or Question, with a poll) without @context. */
export function renderNoteObject(config: Config, input: NoteInput): JsonLd {
  const s = input.status;
  const audience = audienceFor(
    s.visibility,
    input.author.followersUrl,
    input.mentions.map((m) => m.uri),
  );
  const out: JsonLd = {
    id: s.uri,
    type: input.poll ? 'Question' : 'Note',
    summary: s.spoilerText ? s.spoilerText : null,
    inReplyTo: input.inReplyToUri,
    published: iso(s.createdAt),
    url: s.url,
    attributedTo: input.author.uri,
    to: audience.to,
    cc: audience.cc,
    sensitive: s.sensitive,
    atomUri: s.uri,
    inReplyToAtomUri: input.inReplyToUri,
    conversation: input.conversation,
    content: s.content,
  };
  if (s.language) out.contentMap = { [s.language]: s.content };
  if (s.editedAt) out.updated = iso(s.editedAt);
  out.attachment = input.attachments;
  out.tag = [
    ...input.mentions.map((m) => ({ type: 'Mention', href: m.uri, name: `@${m.acct}` })),
    ...s.tags.map((t) => ({ type: 'Hashtag', href: tagUrl(config, t.name.toLowerCase()), name: `#${t.name}` })),
    ...(input.emojis ?? []).map(renderEmoji),
  ];
  const replies = statusRepliesUri(s.uri);
  const self = input.selfReplies ?? [];
  const lastSelf = self.length > 0 ? self[self.length - 1].id : null;
  // Mastodon's first page: the author's own replies; `next` continues them after the last one, or
  // moves on to other accounts' replies.
  out.replies = {
    id: replies,
    type: 'Collection',
    first: {
      type: 'CollectionPage',
      next:
        lastSelf !== null
          ? repliesPageUri(replies, { minId: lastSelf, onlyOtherAccounts: null })
          : repliesPageUri(replies, { minId: null, onlyOtherAccounts: 'true' }),
      partOf: replies,
      items: self.map((r) => r.uri),
    },
  };
  out.likes = { id: statusLikesUri(s.uri), type: 'Collection', totalItems: s.favouritesCount };
  out.shares = { id: statusSharesUri(s.uri), type: 'Collection', totalItems: s.reblogsCount };
  if (input.quote) renderQuote(out, input.quote);
  if (input.canQuoteAutomatically)
    out.interactionPolicy = { canQuote: { automaticApproval: input.canQuoteAutomatically } };
  if (input.poll) {
    const { poll, tallies } = input.poll;
    const options = poll.options.map((name, i) => ({
      type: 'Note',
      name,
      replies: { type: 'Collection', totalItems: tallies[i] ?? 0 },
    }));
    out[poll.multiple ? 'anyOf' : 'oneOf'] = options;
    if (poll.expiresAt) out.endTime = iso(poll.expiresAt);
    if (poll.closedAt) out.closed = iso(poll.closedAt);
    else if (poll.expiresAt && poll.expiresAt.getTime() <= Date.now()) out.closed = iso(poll.expiresAt);
    out.votersCount = poll.votersCount;
  }
  return out;
}

/**
 * Mastodon 4.5's quote members: FEP-044f `quote` with its `quoteAuthorization`, the legacy
 * `quoteUri` and `_misskey_quote`, and for servers that show none of them a `RE:` line
 * (`quote-inline`, which Mastodon's clients hide) after the text.
 */
function renderQuote(out: JsonLd, quote: NonNullable<NoteInput['quote']>): void {
  out.quote = quote.uri;
  out.quoteUri = quote.uri;
  out._misskey_quote = quote.uri;
  if (quote.authorization) out.quoteAuthorization = quote.authorization;
  const link = quote.url ?? quote.uri;
  const escaped = link.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const inline = `<p class="quote-inline">RE: <a href="${escaped}">${escaped}</a></p>`;
  const content = typeof out.content === 'string' ? out.content : '';
  if (!content.includes(escaped)) {
    const withInline = content + inline;
    out.content = withInline;
    if (out.contentMap && typeof out.contentMap === 'object')
      for (const k of Object.keys(out.contentMap)) (out.contentMap as Record<string, string>)[k] = withInline;
  }
}

export function renderNote(config: Config, input: NoteInput): JsonLd {
  return withContext(NOTE_CONTEXT, renderNoteObject(config, input));
}
