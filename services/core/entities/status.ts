// Status entity (mastodon-api-entities.md §3). It is rendered in one way, the page renderer
// (statusRender.ts over statusPage.ts): a single status is a page of one.
import { Type, type Static } from '@sinclair/typebox';
import { AccountEntity, CustomEmojiEntity } from './account.ts';
import { MediaAttachmentEntity } from './mediaAttachment.ts';
import { StatusApplicationEntity } from './application.ts';
import { PollEntity } from './poll.ts';
import { MentionEntity, StatusTagEntity } from './mention.ts';
import { PreviewCardEntity } from './previewCard.ts';
import { QuoteApprovalEntity, ShallowQuoteEntity } from './quote.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

const statusProperties = {
  id: Type.String(),
  uri: Type.String(),
  url: NullableString,
  created_at: Type.String(),
  edited_at: NullableString,
  account: AccountEntity,
  /** Absent in delete/redraft answers, which carry `text` instead. */
  content: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  visibility: Type.String(),
  sensitive: Type.Boolean(),
  spoiler_text: Type.String(),
  media_attachments: Type.Array(MediaAttachmentEntity),
  application: Type.Optional(StatusApplicationEntity),
  mentions: Type.Array(MentionEntity),
  tags: Type.Array(StatusTagEntity),
  emojis: Type.Array(CustomEmojiEntity),
  reblogs_count: Type.Integer(),
  favourites_count: Type.Integer(),
  replies_count: Type.Integer(),
  in_reply_to_id: NullableString,
  in_reply_to_account_id: NullableString,
  poll: Type.Union([PollEntity, Type.Null()]),
  card: Type.Union([PreviewCardEntity, Type.Null()]),
  language: NullableString,
  favourited: Type.Optional(Type.Boolean()),
  reblogged: Type.Optional(Type.Boolean()),
  muted: Type.Optional(Type.Boolean()),
  bookmarked: Type.Optional(Type.Boolean()),
  pinned: Type.Optional(Type.Boolean()),
  filtered: Type.Optional(Type.Array(Type.Unknown())),
  /** Mastodon 4.5 quote posts. */
  quotes_count: Type.Integer(),
  quote_approval: QuoteApprovalEntity,
};

/** A status inside a Quote: its own quote is a ShallowQuote. */
export const QuotedStatusEntity = Type.Object({
  ...statusProperties,
  quote: Type.Union([ShallowQuoteEntity, Type.Null()]),
  reblog: Type.Null(),
});
export const QuoteEntity = Type.Object({
  state: Type.String(),
  quoted_status: Type.Union([QuotedStatusEntity, Type.Null()]),
});
export type Quote = Static<typeof QuoteEntity>;
export type QuotedStatus = Static<typeof QuotedStatusEntity>;
const quoteProperty = Type.Union([QuoteEntity, Type.Null()]);

export const NestedStatusEntity = Type.Object({ ...statusProperties, quote: quoteProperty, reblog: Type.Null() });
export const StatusEntity = Type.Object({
  ...statusProperties,
  quote: quoteProperty,
  reblog: Type.Union([NestedStatusEntity, Type.Null()]),
});
export type Status = Static<typeof StatusEntity>;
export type NestedStatus = Static<typeof NestedStatusEntity>;
