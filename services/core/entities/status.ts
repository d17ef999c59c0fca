// Status entity (mastodon-api-entities.md §3), rendered in batches: one query per kind of related
// record, whatever the number of statuses. Viewer-relative flags appear only for a user viewer.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, accountView, type CachedAccount } from '../model/accounts.ts';
import { readThrough } from '../db/docCache.ts';
import { findApps } from '../auth/appCache.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { viewerState, type ViewerState } from '../interactions/viewerFlags.ts';
import { loadReblogged } from '../statuses/visibility.ts';
import { loadAttachments } from '../media/statusAttachments.ts';
import { AccountEntity, CustomEmojiEntity, presentAccounts, type Account } from './account.ts';
import { MediaAttachmentEntity, presentMediaAttachment } from './mediaAttachment.ts';
import { StatusApplicationEntity } from './application.ts';
import { PollEntity, presentPoll, type PollEntity as PollEntityType } from './poll.ts';
import { polls } from '../model/polls.ts';
import { MentionEntity, StatusTagEntity, presentMention, presentStatusTag } from './mention.ts';
import { activeFilters, matchFilters } from '../filters/match.ts';
import { presentFilterResults } from './filter.ts';
import { emojisInTexts, type CustomEmojiEntity as EmojiEntity } from '../../core/emojis/emojis.ts';
import { PreviewCardEntity, presentPreviewCard, type PreviewCard } from './previewCard.ts';
import { loadStatusCards } from '../../core/previews/cards.ts';
import { statuses } from '../model/statuses.ts';
import { loadViewerRelations, type ViewerRelations } from '../statuses/visibility.ts';
import { needsFollowRelation, presentQuoteApproval } from '../quotes/policy.ts';
import {
  QuoteApprovalEntity,
  ShallowQuoteEntity,
  quotedIdsOf,
  shallowQuote,
  shownQuoteState,
  showsQuotedStatus,
} from './quote.ts';

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

export interface PresentOptions {
  /** Delete/redraft answers: `text` (source) instead of `content`. */
  source?: boolean;
  /**
   * A reblog wrapper's favourited/reblogged/bookmarked flags are those of the original (Mastodon's
   * rendering of a single status without preloaded relationships: `status.proper`).
   */
  properFlags?: boolean;
  /**
   * For the cached renderings (statusPage.ts's shells), which leave the author out and lay it over
   * per request: the authors are read from the document cache and not rendered.
   */
  withoutAccounts?: boolean;
  /**
   * The statuses were made by this request: they have no preview card yet (the link-previews
   * pipeline attaches it after the event, and drops the rendering then), so none is looked up.
   */
  justPosted?: boolean;
}

/** Stands in for the author of a rendering made `withoutAccounts` (whose caller drops it). */
const NO_ACCOUNT = Object.freeze({}) as Account;

export type { ViewerState };

export async function presentStatuses(
  core: Core,
  docs: StatusDoc[],
  viewer: CachedAccount | null,
  opts: PresentOptions = {},
): Promise<Status[]> {
  if (docs.length === 0) return [];
  const originals = await loadReblogged(core, docs);
  // Quoted statuses: one more read, only when the statuses quote something.
  const quotedIds = quotedIdsOf([...docs, ...originals.values()]);
  const quotedDocs = quotedIds.length
    ? await collection(core.db, statuses)
        .find({ _id: { $in: quotedIds } })
        .toArray()
    : [];
  const quotedById = new Map(quotedDocs.map((q) => [q._id, q]));
  const all = [...docs, ...originals.values(), ...quotedDocs];
  // The viewer's relations to quoted authors (what they may see of them) and to authors whose
  // quote policy names followers.
  const relationIds = viewer
    ? [
        ...quotedDocs.map((q) => q.accountId),
        ...all.filter((s) => needsFollowRelation(s, viewer._id)).map((s) => s.accountId),
      ]
    : quotedDocs.map((q) => q.accountId);
  const accountIds = [...new Set(all.map((s) => s.accountId))];
  const appIds = [...new Set(all.map((s) => s.applicationId).filter((a): a is Id => a !== null))];
  const pollIds = all.map((s) => s.pollId).filter((p): p is Id => p !== null);
  // Every kind of related record at once: one round of parallel queries (and the authors' roles).
  const [[accountDocs, rendered], media, appDocs, pollDocs, cardDocs, active, state, relations] = await Promise.all([
    opts.withoutAccounts
      ? readThrough(core, accountView, accountIds).then((found) => {
          const docs = [...found.values()];
          return [docs, docs.map(() => NO_ACCOUNT)] as const;
        })
      : collection(core.db, accounts)
          .find({ _id: { $in: accountIds } })
          .toArray()
          .then(async (found) => [found, await presentAccounts(core, found)] as const),
    loadAttachments(core, [...new Set(all.flatMap((s) => s.mediaIds))]),
    appIds.length ? findApps(core, appIds).then((found) => [...found.values()]) : [],
    pollIds.length
      ? collection(core.db, polls)
          .find({ _id: { $in: pollIds } })
          .toArray()
      : [],
    opts.justPosted
      ? new Map<bigint, never>()
      : loadStatusCards(
          core,
          all.map((s) => s._id),
        ),
    viewer ? activeFilters(core, viewer._id) : [],
    viewer
      ? viewerState(
          core,
          viewer._id,
          all.map((s) => s._id),
          all.map((s) => s.conversationId).filter((c): c is Id => c !== null),
        )
      : null,
    relationIds.length ? loadViewerRelations(core, viewer, relationIds, quotedDocs.length > 0) : null,
  ]);
  const accountById = new Map<bigint, Account>(accountDocs.map((d, i) => [d._id, rendered[i]]));
  const mediaById = new Map(media.map((m) => [m._id, presentMediaAttachment(core, m)]));
  const appById = new Map(appDocs.map((a) => [a._id, { name: a.name, website: a.website }]));
  const cardById = new Map<bigint, PreviewCard>([...cardDocs].map(([id, c]) => [id, presentPreviewCard(c)]));
  const pollById = new Map<bigint, PollEntityType>();
  const authorDomain = new Map(accountDocs.map((d) => [d._id, d.domain]));
  const pollOptions = new Map(pollDocs.map((p) => [p._id, p.options]));
  for (const p of pollDocs)
    pollById.set(p._id, await presentPoll(core, p, viewer?._id ?? null, authorDomain.get(p.accountId) ?? null));
  const emojisById = new Map<bigint, EmojiEntity[]>(
    await Promise.all(
      all.map(
        async (s) =>
          [
            s._id,
            await emojisInTexts(
              core,
              [s.spoilerText, s.content, ...(s.pollId === null ? [] : (pollOptions.get(s.pollId) ?? []))],
              authorDomain.get(s.accountId) ?? null,
            ),
          ] as const,
      ),
    ),
  );

  // A reblog wrapper shows its original's policy (Mastodon: `status.proper`).
  const approvalOf = (s: StatusDoc) => {
    const proper = s.reblogOfId === null ? s : (originals.get(s.reblogOfId) ?? s);
    const viewerId = viewer?._id ?? null;
    return presentQuoteApproval(proper, viewerId, { follows: relations?.following.has(proper.accountId) });
  };
  const quoteOf = (q: NonNullable<StatusDoc['quote']>, rel: ViewerRelations | null): Quote => {
    const quoted = q.quotedStatusId === null ? undefined : quotedById.get(q.quotedStatusId);
    const state = shownQuoteState(q, {
      quoted,
      authorUsable:
        quoted !== undefined && accountById.has(quoted.accountId) && !rel?.unavailable.has(quoted.accountId),
      viewerId: viewer?._id ?? null,
      relations: rel,
    });
    if (!quoted || !showsQuotedStatus(state)) return { state, quoted_status: null };
    const inner = render(quoted, true, true) as unknown as QuotedStatus;
    inner.quote = shallowQuote(quoted.quote);
    return { state, quoted_status: inner };
  };

  const render = (s: StatusDoc, nested: boolean, shallow = false): NestedStatus => {
    const account = accountById.get(s.accountId);
    if (!account) throw new Error(`status ${s._id}: author ${s.accountId} missing`);
    const out: NestedStatus = {
      id: String(s._id),
      uri: s.uri,
      url: s.url,
      created_at: s.createdAt.toISOString(),
      edited_at: s.editedAt ? s.editedAt.toISOString() : null,
      account,
      visibility: s.visibility,
      sensitive: s.sensitive,
      spoiler_text: s.spoilerText,
      media_attachments: s.mediaIds.map((id) => mediaById.get(id)).filter((m) => m !== undefined),
      mentions: s.mentions.map(presentMention),
      tags: s.tags.map((t) => presentStatusTag(core.config, t)),
      emojis: emojisById.get(s._id) ?? [],
      reblogs_count: s.reblogsCount,
      favourites_count: s.favouritesCount,
      replies_count: s.repliesCount,
      in_reply_to_id: s.inReplyToId === null ? null : String(s.inReplyToId),
      in_reply_to_account_id: s.inReplyToAccountId === null ? null : String(s.inReplyToAccountId),
      poll: s.pollId === null ? null : (pollById.get(s.pollId) ?? null),
      card: cardById.get(s._id) ?? null,
      quote: null,
      language: s.language,
      reblog: null,
      quotes_count: s.reblogOfId === null ? (s.quotesCount ?? 0) : 0,
      quote_approval: approvalOf(s),
    };
    if (!shallow && s.quote) out.quote = quoteOf(s.quote, relations);
    if (opts.source && !nested) out.text = s.text;
    else out.content = s.content;
    const app = s.applicationId === null ? undefined : appById.get(s.applicationId);
    if (app) out.application = app;
    if (viewer && state) {
      const flagsOf = opts.properFlags && !nested && s.reblogOfId !== null ? s.reblogOfId : s._id;
      out.favourited = state.favourited.has(flagsOf);
      out.reblogged = state.reblogged.has(flagsOf);
      out.muted = !nested && s.conversationId !== null && state.mutedConversations.has(s.conversationId);
      out.bookmarked = state.bookmarked.has(flagsOf);
      // Matched against the status itself, or for a reblog wrapper the reblogged original.
      const proper = !nested && s.reblogOfId !== null ? (originals.get(s.reblogOfId) ?? s) : s;
      out.filtered = presentFilterResults(matchFilters(active, proper));
      if (s.accountId === viewer._id && s.reblogOfId === null && s.visibility !== 'direct')
        out.pinned = state.pinned.has(s._id);
    }
    return out;
  };

  return docs.map((s) => {
    const original = s.reblogOfId === null ? undefined : originals.get(s.reblogOfId);
    const out: Status = render(s, false);
    if (original) out.reblog = render(original, true);
    return out;
  });
}

export async function presentStatus(
  core: Core,
  doc: StatusDoc,
  viewer: CachedAccount | null,
  opts: PresentOptions = {},
): Promise<Status> {
  const [out] = await presentStatuses(core, [doc], viewer, { properFlags: true, ...opts });
  return out;
}
