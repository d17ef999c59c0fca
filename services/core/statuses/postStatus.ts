// Posting a local status: validation (length as Mastodon counts it, reply target, media, poll),
// text processing, then one outbox write (StatusCreated) with the status document. Independent of
// HTTP: the API and the scheduler (due scheduled statuses) both call it.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { writeAuthorsThrough } from '../entities/statusPage.ts';
import { users, type UserDoc } from '../model/users.ts';
import {
  statuses,
  postUniqueKey,
  VISIBILITIES,
  type StatusDoc,
  type StatusQuote,
  type Visibility,
} from '../model/statuses.ts';
import { LIMITS } from '../instance/limits.ts';
import { countStatusCharacters } from '../text/countCharacters.ts';
import { processStatusText, tagNamesOf } from './entities.ts';
import { statusNotFound, statusValidation } from './errors.ts';
import { findVisibleStatus } from './visibility.ts';
import { localStatusUri, localStatusUrl } from './urls.ts';
import { runIdempotent } from './idempotency.ts';
import { attachMedia, checkMediaForPosting, checkPollInput, createStatusPoll, type PollInput } from './attachments.ts';
import { statusCreatedEvent } from './events.ts';
import { countQuote, newQuote, quotableStatus } from '../quotes/quotes.ts';
import { quoteRequestEvents } from '../quotes/federation.ts';
import { localStatusPolicy, type QuotePolicySetting } from '../quotes/policy.ts';
import { quoteRequestUri } from '../activitypub/uris.ts';
import { unprocessable } from '../errors.ts';
import { presentAccounts } from '../entities/account.ts';
import { Coalescer } from '../events/coalesce.ts';
import { BatchedInsert } from '../db/batchedInsert.ts';
import { keepPosted } from './recentlyPosted.ts';
import { countedCopy, countOnce } from '../db/countOnce.ts';
import { authorStatusCountChanges, countedParentOf } from './statusCounts.ts';
import { epochMs, traceStage, tracingStages } from '../streaming/latencyTrace.ts';

export interface PostStatusInput {
  text?: string | null;
  spoilerText?: string | null;
  /** null: the author's default. */
  sensitive?: boolean | null;
  visibility?: Visibility | null;
  language?: string | null;
  inReplyToId?: Id | null;
  mediaIds?: Id[];
  poll?: PollInput | null;
  /** Mastodon 4.5 quote posts: the status quoted, and who may quote this one (null: the user's default). */
  quotedStatusId?: Id | null;
  quotePolicy?: QuotePolicySetting | null;
  /** `allowed_mentions`: the only accounts the text may mention (null: anyone). */
  allowedMentions?: Id[] | null;
}

export interface PostStatusOptions {
  applicationId?: Id | null;
  idempotencyKey?: string | null;
  /** The author's user when the caller has it (the API's authenticated request): not read again. */
  user?: Pick<UserDoc, 'accountId' | 'settings' | 'locale'>;
}

const LANGUAGE = /^([a-z]{2,3})(-[a-z0-9]{2,8})?$/i;

/** An ISO 639 code as Mastodon keeps it (`en`, `zh-TW`); null for anything else. */
const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

// Asked on every post (DisplayNames is slow); at most 26³ two- and three-letter codes.
const knownLanguages = new Map<string, boolean>();
function isLanguage(code: string): boolean {
  let known = knownLanguages.get(code);
  if (known === undefined) knownLanguages.set(code, (known = languageNames.of(code) !== undefined));
  return known;
}

/** An ISO 639 language code (with optional region) that exists, normalised; null otherwise. */
export function normaliseLanguage(value: string | null | undefined): string | null {
  const m = value ? LANGUAGE.exec(value.trim()) : null;
  if (!m) return null;
  // Unknown codes ("xx") fall back to the user's language like Mastodon's locale cascade.
  if (!isLanguage(m[1].toLowerCase())) return null;
  return m[1].toLowerCase() + (m[2] ? `-${m[2].slice(1).toUpperCase()}` : '');
}

export function checkLength(text: string, spoilerText: string): void {
  const max = LIMITS.statuses.maxCharacters;
  if (countStatusCharacters(text, spoilerText) > max) throw statusValidation(`Text character limit of ${max} exceeded`);
}

export async function postStatus(
  core: Core,
  author: AccountDoc,
  input: PostStatusInput,
  opts: PostStatusOptions = {},
): Promise<StatusDoc> {
  if (opts.idempotencyKey) {
    const { result } = await runIdempotent(core, author._id, opts.idempotencyKey, async () => ({
      kind: 'status',
      id: (await createStatus(core, author, input, opts))._id,
    }));
    const status = await collection(core.db, statuses).findOne({ _id: result.id });
    if (!status) throw statusNotFound();
    return status;
  }
  return createStatus(core, author, input, opts);
}

async function createStatus(
  core: Core,
  author: AccountDoc,
  input: PostStatusInput,
  opts: PostStatusOptions,
): Promise<StatusDoc> {
  const started = tracingStages ? epochMs() : 0;
  const text = input.text ?? '';
  const spoilerText = (input.spoilerText ?? '').trim();
  const mediaIds = input.mediaIds ?? [];

  if (text.trim() === '' && mediaIds.length === 0 && !input.poll) throw statusValidation("Text can't be blank");
  if (mediaIds.length > 0 && input.poll) throw statusValidation('Media attachments cannot be combined with a poll');
  if (mediaIds.length > LIMITS.statuses.maxMediaAttachments) {
    throw statusValidation(`Media attachments can have at most ${LIMITS.statuses.maxMediaAttachments} items`);
  }
  checkLength(text, spoilerText);
  if (input.visibility && !VISIBILITIES.includes(input.visibility))
    throw statusValidation('Visibility is not included in the list');
  const poll = input.poll ? checkPollInput(input.poll) : null;

  const user =
    author.domain !== null
      ? null
      : opts.user?.accountId === author._id
        ? opts.user
        : await collection(core.db, users).findOne({ accountId: author._id });
  // Only quote posts pay for the quoted status's read and policy check.
  const quoted = input.quotedStatusId ? await quotableStatus(core, author, input.quotedStatusId) : null;
  let visibility: Visibility = input.visibility ?? user?.settings.defaultPrivacy ?? 'public';
  // Mastodon: quoting a followers-only post keeps the quote followers-only.
  if (quoted?.visibility === 'private' && (visibility === 'public' || visibility === 'unlisted'))
    visibility = 'private';
  // A moderator's `sensitive` action forces the media of every later post sensitive.
  const sensitive =
    (input.sensitive ?? user?.settings.defaultSensitive ?? false) ||
    spoilerText !== '' ||
    (author.sensitizedAt != null && mediaIds.length > 0);
  // Mastodon's cascade: the request, the user's posting language, the user's locale, the default locale.
  const language =
    normaliseLanguage(input.language) ??
    normaliseLanguage(user?.settings.defaultLanguage) ??
    normaliseLanguage(user?.locale) ??
    (user ? 'en' : null);

  let parent: StatusDoc | null = null;
  if (input.inReplyToId) {
    parent = await findVisibleStatus(core, author, input.inReplyToId);
    if (parent?.reblogOfId) parent = await findVisibleStatus(core, author, parent.reblogOfId);
    if (!parent) throw statusNotFound('The post you are trying to reply to does not appear to exist.');
  }
  const media = await checkMediaForPosting(core, author._id, mediaIds);
  const processed = await processStatusText(core, text);
  if (input.allowedMentions) await safeguardMentions(core, processed.mentions, input.allowedMentions);

  const id = await core.statusIds.next();
  if (tracingStages) {
    traceStage(id, 'post.started', started);
    traceStage(id, 'post.id');
  }
  const now = new Date();
  const quote = quoted
    ? newQuote(
        author,
        quoted,
        visibility,
        processed.mentions.map((m) => m.accountId),
        quoteRequestUri(core.config, author.username, id),
      )
    : null;
  // A new thread is named after its root status: no counter and no conversation document (those
  // exist for remote threads, which have a URI to find them by; ADR 0009).
  const conversationId = parent?.conversationId ?? id;
  const status: StatusDoc = {
    _id: id,
    accountId: author._id,
    uri: localStatusUri(core.config, author.username, id),
    url: localStatusUrl(core.config, author.username, id),
    local: true,
    text,
    content: processed.content,
    spoilerText,
    sensitive,
    language,
    visibility,
    inReplyToId: parent?._id ?? null,
    inReplyToAccountId: parent?.accountId ?? null,
    reblogOfId: null,
    reblogOfAccountId: null,
    conversationId,
    mentions: processed.mentions,
    ...withQuotedAccess(
      processed.mentions.map((m) => m.accountId),
      author._id,
      quote,
    ),
    tags: processed.tags,
    tagNames: tagNamesOf(processed.tags),
    mediaIds: media,
    pollId: null,
    applicationId: opts.applicationId ?? null,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    ...(quote ? { quote } : {}),
    quoteApprovalPolicy: localStatusPolicy(
      input.quotePolicy ?? user?.settings.defaultQuotePolicy ?? 'public',
      visibility,
    ),
    uniqueKey: postUniqueKey(id),
    createdAt: now,
    updatedAt: now,
    editedAt: null,
    deletedAt: null,
  };

  // A quote of a remote post asks its author's server for approval (FEP-044f QuoteRequest).
  const requests = quote?.state === 'pending' && quoted ? await quoteRequestEvents(core, author, status, quoted) : [];
  // The events ride in the status document (ADR 0016): one insert, no outbox record of their own.
  const events = [statusCreatedEvent(status, { hasPoll: poll !== null }), ...requests];
  // The author's counters are written beside the insert, not after it (ADR 0018): each waits for
  // a group commit, and the counters after the insert were the longest wait of a post's answer.
  // An insert that fails takes its count back.
  const counting = countAuthor(core, status);
  const counted = counting.then(
    () => true,
    () => false,
  );
  let inserted = false;
  try {
    await core.outbox.writeCarried(
      events,
      statuses,
      id,
      async (outbox) => {
        if (poll) status.pollId = await createStatusPoll(core, id, author._id, poll);
        if (media.length > 0) await attachMedia(core, media, id);
        await statusInsertsOf(core).insertOne({ ...status, outbox });
        traceStage(id, 'post.inserted');
        inserted = true;
        keepPosted(core, status);
      },
      // While the events are published: the count (awaited, so the answer shows it) and the reply's.
      async () => {
        await counting;
        traceStage(id, 'post.counted');
        await countReply(core, status);
      },
    );
  } catch (err) {
    // A direct post is not counted (countAuthor), so there is nothing to take back.
    if (!inserted && status.visibility !== 'direct' && (await counted))
      await uncountAuthor(core, status).catch((undo: unknown) =>
        core.logger.error({ err: undo, statusId: String(id) }, 'count of a post that was not stored not taken back'),
      );
    throw err;
  }
  if (quote?.state === 'accepted') await countQuote(core, quote.quotedStatusId, 1);
  traceStage(id, 'post.returned');
  return status;
}

/**
 * The mentions of a new post; a quote silently mentions the quoted author (Mastodon's
 * Quote#ensure_quoted_access), so that they may see it and their server receives it. An edit
 * keeps it (a mention dropped from the text stays silently).
 */
export function withQuotedAccess(
  mentioned: Id[],
  authorId: Id,
  quote: StatusQuote | null,
): Pick<StatusDoc, 'mentionedAccountIds' | 'silentMentionIds'> {
  const quotedAuthor = quote?.quotedAccountId ?? null;
  if (quotedAuthor === null || quotedAuthor === authorId || mentioned.includes(quotedAuthor))
    return { mentionedAccountIds: mentioned };
  return { mentionedAccountIds: [...mentioned, quotedAuthor], silentMentionIds: [quotedAuthor] };
}

/** An edit's mentions with the silent ones the status had and the text does not name now. */
export function keptSilentMentions(
  status: Pick<StatusDoc, 'silentMentionIds'>,
  mentioned: Id[],
): Pick<StatusDoc, 'mentionedAccountIds' | 'silentMentionIds'> {
  const silent = (status.silentMentionIds ?? []).filter((a) => !mentioned.includes(a));
  return { mentionedAccountIds: [...mentioned, ...silent], silentMentionIds: silent };
}

/**
 * `allowed_mentions` (Mastodon 4.5): the client lists whom the post may reach; mentioning anyone
 * else refuses the post with 422 and the unexpected accounts, before anything is stored.
 */
async function safeguardMentions(core: Core, mentions: readonly { accountId: Id }[], allowed: Id[]): Promise<void> {
  const unexpected = [...new Set(mentions.map((m) => m.accountId).filter((a) => !allowed.includes(a)))];
  if (unexpected.length === 0) return;
  const docs = await collection(core.db, accounts)
    .find({ _id: { $in: unexpected } })
    .toArray();
  throw unprocessable('Post would be sent to unexpected accounts', {
    unexpected_accounts: await presentAccounts(core, docs),
  });
}

/** Concurrent posts' status documents go in one insert (ADR 0009). */
const statusInserts = new WeakMap<object, BatchedInsert<StatusDoc>>();

function statusInsertsOf(core: Core): BatchedInsert<StatusDoc> {
  let b = statusInserts.get(core.db);
  if (!b) statusInserts.set(core.db, (b = new BatchedInsert(collection(core.db, statuses))));
  return b;
}

/**
 * The author counters of concurrent posts in one command (ADR 0009): each account's `$inc` by its
 * number of posts and its latest time; each caller waits for the command that carried its post.
 */
const authorCounters = new WeakMap<object, Coalescer<StatusDoc>>();

function authorCountersOf(core: Core): Coalescer<StatusDoc> {
  let c = authorCounters.get(core.db);
  if (!c) {
    c = new Coalescer(async (posts) => {
      // The statuses are written: a MongoDB restart must not leave their authors' counts behind,
      // nor count them twice (each account's change is marked by its newest status). The authors'
      // cached copies, which the answer's rendering, the fan-out and the author's next request
      // each read, are replaced for the whole group, not dropped (ADR 0021).
      const changes = authorStatusCountChanges(posts);
      const byAccount = new Map(changes.map((ch) => [ch._id, ch]));
      await writeAuthorsThrough(core, [...byAccount.keys()], {
        write: (raw) => countOnce(raw, changes),
        // The new copies from the cached ones, when those are from before the count: no find.
        apply: (copy) => countedCopy(byAccount.get(copy._id)!, copy),
      });
    });
    authorCounters.set(core.db, c);
  }
  return c;
}

/** Denormalised counters (Mastodon: direct messages do not count; replies count on public threads). */
export async function countNewStatus(core: Core, status: StatusDoc): Promise<void> {
  await countAuthor(core, status);
  await countReply(core, status);
}

/** The author's `statuses_count` and `last_status_at`, shared with concurrent posts. */
function countAuthor(core: Core, status: StatusDoc): Promise<void> {
  return status.visibility === 'direct' ? Promise.resolve() : authorCountersOf(core).add([status]);
}

/** Takes back countAuthor for a post whose insert failed (marked as a deletion of its id would be). */
async function uncountAuthor(core: Core, status: StatusDoc): Promise<void> {
  await countOnce(collection(core.db, accounts), [
    { _id: status.accountId, inc: { statusesCount: -1 }, mark: `s-${status._id}` },
  ]);
}

/** The replied-to status's `replies_count`. */
async function countReply(core: Core, status: StatusDoc): Promise<void> {
  const parentId = countedParentOf(status);
  if (parentId !== null)
    await collection(core.db, statuses).updateOne({ _id: parentId }, { $inc: { repliesCount: 1 } });
}
