// Statuses: local and remote posts and reblogs in one collection. A reblog is a status of its own
// (`reblogOfId` set, no text). Deletes are soft (`deletedAt`) so the outbox relay can verify them
// and consumers can still read what was removed.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import type { CarriedOutbox } from '../events/outbox.ts';

export type Visibility = 'public' | 'unlisted' | 'private' | 'direct';
export const VISIBILITIES: readonly Visibility[] = ['public', 'unlisted', 'private', 'direct'];

export interface StatusMention {
  accountId: Id;
  username: string;
  /** `user` for local accounts, `user@domain` for remote ones. */
  acct: string;
  url: string;
}

/** Mastodon's quote states; rendering adds `unauthorized`, `blocked_account`... per viewer. */
export type QuoteState = 'pending' | 'accepted' | 'rejected' | 'revoked' | 'deleted';

/**
 * The quote a status makes of another (Mastodon 4.5's `quotes` row, kept on the quoting status:
 * one per status; its id is the quoting status's id).
 */
export interface StatusQuote {
  /** Null while the quoted status is not known here (a remote quote not fetched yet). */
  quotedStatusId: Id | null;
  quotedAccountId: Id | null;
  state: QuoteState;
  /** The quoted status's ActivityPub id (remote quotes; kept to fetch or match it later). */
  quotedUri: string | null;
  /** The QuoteAuthorization stamp's URI that approves a remote quote (or ours of a local one). */
  approvalUri: string | null;
  /** Local quotes of remote statuses: the id of the QuoteRequest sent for it. */
  activityUri: string | null;
  /** Read from a legacy form (`quoteUri`, `_misskey_quote`, `quoteUrl`) without `quote`. */
  legacy: boolean;
  /**
   * A quote approved by a remote stamp: when to fetch the stamp again (Mastodon's Quote
   * BACKGROUND_REFRESH_INTERVAL), so a stamp its author withdrew without a Delete we received
   * revokes the quote. Absent: never (local stamps, other states).
   */
  refreshAt?: Date;
}

export interface StatusTag {
  id: Id;
  /** As written in the text (case preserved). */
  name: string;
}

export interface StatusDoc {
  _id: Id;
  accountId: Id;
  /** ActivityPub id, e.g. https://host/users/alice/statuses/ID */
  uri: string;
  /** HTML permalink, e.g. https://host/@alice/ID; null for reblogs. */
  url: string | null;
  local: boolean;
  /** Plain source text (local statuses). */
  text: string;
  /** Rendered, sanitised HTML. */
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  visibility: Visibility;
  inReplyToId: Id | null;
  inReplyToAccountId: Id | null;
  reblogOfId: Id | null;
  reblogOfAccountId: Id | null;
  conversationId: Id | null;
  mentions: StatusMention[];
  /** Ids of `mentions`, indexed: who may see a private/direct status. */
  mentionedAccountIds: Id[];
  /**
   * Ids in mentionedAccountIds that the text does not mention (Mastodon's silent mentions: the
   * author of a quoted post, so that they may see and receive the quote): neither rendered, nor
   * tagged in ActivityPub, nor notified. Absent: none.
   */
  silentMentionIds?: Id[];
  tags: StatusTag[];
  /** Normalised tag names, indexed for hashtag timelines. */
  tagNames: string[];
  mediaIds: Id[];
  pollId: Id | null;
  applicationId: Id | null;
  repliesCount: number;
  reblogsCount: number;
  favouritesCount: number;
  /** Accepted quotes of this status (absent: 0). */
  quotesCount?: number;
  /** What this status quotes (absent or null: nothing). */
  quote?: StatusQuote | null;
  /**
   * Who may quote it, as Mastodon stores it: automatic-approval flags << 16 | manual-approval
   * flags (services/core/quotes/policy.ts). Absent: 0 (nobody but the author).
   */
  quoteApprovalPolicy?: number;
  /**
   * Unique per status: `s:<id>` for a post, `r:<accountId>:<reblogOfId>` for a live reblog, so one
   * account cannot reblog a status twice even under concurrent requests. Freed on delete.
   */
  uniqueKey: string;
  createdAt: Date;
  updatedAt: Date;
  editedAt: Date | null;
  /** Remote statuses: when their replies were last crawled (Mastodon's fetched_replies_at). */
  fetchedRepliesAt?: Date | null;
  deletedAt: Date | null;
  /** The events of its insert until they are published (events/outbox.ts writeCarried). */
  outbox?: CarriedOutbox;
}

export const statuses = defineCollection<StatusDoc>(
  'statuses',
  [
    { key: { accountId: 1, _id: -1 }, name: 'account_id' },
    { key: { inReplyToId: 1 }, name: 'in_reply_to' },
    { key: { reblogOfId: 1, _id: -1 }, name: 'reblog_of' },
    { key: { conversationId: 1 }, name: 'conversation' },
    { key: { uri: 1 }, name: 'uri', unique: true },
    { key: { uniqueKey: 1 }, name: 'unique_key', unique: true },
    { key: { tagNames: 1, _id: -1 }, name: 'tags' },
    { key: { visibility: 1, _id: -1 }, name: 'visibility' },
    // GET /api/v1/statuses/:id/quotes, and the quotes a deletion or an edit of the quoted status reaches.
    { key: { 'quote.quotedStatusId': 1, _id: -1 }, name: 'quoted_status', sparse: true },
    { key: { 'quote.refreshAt': 1 }, name: 'quote_refresh', sparse: true },
    // A remote Delete may name a quote approval (FEP-044f): asked for every Delete received.
    { key: { 'quote.approvalUri': 1 }, name: 'quote_approval', sparse: true },
  ],
  // A post drops the newest pages of its author's statuses kept in the process, not every account's.
  { cachedById: true, insertsScopedBy: 'accountId', carriesOutbox: true },
);

export function postUniqueKey(id: Id): string {
  return `s:${id}`;
}

export function reblogUniqueKey(accountId: Id, reblogOfId: Id): string {
  return `r:${accountId}:${reblogOfId}`;
}
