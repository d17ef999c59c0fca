// Remote statuses (federation reference §4, §6.2, §6.5 Create/Update/Delete): a Note/Question (or
// Article/Page/... as a link) becomes a status in the same collection as ours, with unique `uri`,
// and enters fan-out and notifications through the same StatusCreated event as a local post.
// Origin rules: the object id is on the actor's host; a Delete marker refuses a late Create.
import type { Core } from '../../context.ts';
import { nextSerialId } from '../../ids.ts';
import { collection, isDuplicateKeyError } from '../../db/mongo.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { accounts } from '../../model/accounts.ts';
import { statuses, postUniqueKey, type StatusDoc, type StatusQuote, type Visibility } from '../../model/statuses.ts';
import { conversations } from '../../model/conversations.ts';
import { follows } from '../../model/follows.ts';
import { mediaAttachments } from '../../model/media.ts';
import { createRemoteAttachments } from '../../media/activitypub.ts';
import { remotePollFrom, upsertRemotePoll } from '../../polls/activitypub.ts';
import { tagNamesOf } from '../../statuses/entities.ts';
import { statusCreatedEvent } from '../../statuses/events.ts';
import { countNewStatus, normaliseLanguage } from '../../statuses/postStatus.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { escapeHtml } from '../../text/formatStatus.ts';
import { fetchDocument } from '../fetchDocument.ts';
import { emojiTagsOf, pageUrl, resolveActor } from '../actors.ts';
import { upsertRemoteEmojis } from '../../emojis/remoteEmojis.ts';
import { asArray, idOf, idsOf, obj, str, typeIs, type JsonObject } from '../json.ts';
import { hostOf, isLocalUri, parseLocalUri, PUBLIC_FORMS } from '../uris.ts';
import { plainText, sanitizeRemoteHtml } from '../sanitize.ts';
import { FIRST_PAGE_DEPTH, firstPageRepliesJob } from '../replies/job.ts';
import type { NewEvent } from '../../events/outbox.ts';
import { remoteQuoteOf } from '../../quotes/ingress.ts';
import { audiencesOf, type Audience } from './audience.ts';
import { countQuote } from '../../quotes/quotes.ts';
import { policyFromInteractionPolicy } from '../../quotes/policy.ts';
import { deleteMarkerKey } from './deleteMarkers.ts';

export const NOTE_TYPES = ['Note', 'Question'] as const;
export const CONVERTED_TYPES = ['Article', 'Page', 'Image', 'Audio', 'Video', 'Event'] as const;
/**
 * Status ids at the given times that no stored status holds: a remote status's id is made from its
 * `published` time, which other statuses can share (see StatusIdGenerator's `past`); a taken one
 * is replaced, so an insert never fails on `_id` (which would lose the status, its event naming
 * another one).
 */
export async function freeStatusIds(core: Core, ats: Date[]): Promise<bigint[]> {
  const ids = await Promise.all(ats.map((at) => core.statusIds.next(at)));
  for (let attempt = 0; attempt < 5; attempt++) {
    const taken = new Set(
      (
        await collection(core.db, statuses)
          .find({ _id: { $in: ids } }, { projection: { _id: 1 } })
          .toArray()
      ).map((s) => s._id),
    );
    const seen = new Set<bigint>();
    const again = ids.flatMap((id, i) => {
      const clash = taken.has(id) || seen.has(id);
      seen.add(id);
      return clash ? [i] : [];
    });
    if (again.length === 0) return ids;
    for (const i of again) ids[i] = await core.statusIds.next(ats[i]);
  }
  throw new Error('no free status id after 5 attempts');
}

export function isStatusObject(object: unknown): boolean {
  return typeIs(object, ...NOTE_TYPES, ...CONVERTED_TYPES);
}

/** A status (not deleted) by its ActivityPub id; ours are found by their id too. */
export async function findStatusByUri(core: Core, uri: string): Promise<StatusDoc | null> {
  const local = parseLocalUri(core.config, uri);
  if (local && (local.kind === 'status' || local.kind === 'statusActivity' || local.kind === 'statusPage')) {
    return collection(core.db, statuses).findOne({ _id: local.id, deletedAt: null });
  }
  if (isLocalUri(core.config, uri)) return null;
  return collection(core.db, statuses).findOne({ uri, deletedAt: null });
}

/** Mastodon's StatusParser#visibility over the object's addressing (else the activity's). */
export function visibilityOf(object: JsonObject, activity: JsonObject | null, followersUri: string): Visibility {
  const hasAudience = object.to !== undefined || object.cc !== undefined;
  const to = idsOf(hasAudience ? object.to : activity?.to);
  const cc = idsOf(hasAudience ? object.cc : activity?.cc);
  if (to.some((x) => PUBLIC_FORMS.has(x))) return 'public';
  if (cc.some((x) => PUBLIC_FORMS.has(x))) return 'unlisted';
  if (followersUri && to.includes(followersUri)) return 'private';
  return 'direct';
}

export function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function contentOf(object: JsonObject): { html: string; language: string | null } {
  const map = obj(object.contentMap);
  const mapKey = map ? Object.keys(map).find((k) => typeof map[k] === 'string') : undefined;
  const raw = typeof object.content === 'string' ? object.content : mapKey && map ? (map[mapKey] as string) : '';
  const language = normaliseLanguage(mapKey ?? null);
  if (typeIs(object, ...CONVERTED_TYPES)) {
    // Mastodon shows converted types as a title, summary and link, not their body.
    const name = plainText(object.name, 500);
    const summary = str(object.summary, 10_000) ?? '';
    const link = pageUrl(object.url, String(object.id)) ?? String(object.id);
    const html =
      (name ? `<h2>${escapeHtml(name)}</h2>` : '') +
      summary +
      `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`;
    return { html: sanitizeRemoteHtml(html), language };
  }
  return { html: sanitizeRemoteHtml(raw), language };
}

async function conversationFor(core: Core, object: JsonObject, parent: StatusDoc | null, at: Date): Promise<bigint> {
  if (parent?.conversationId) return parent.conversationId;
  const uri = str(object.conversation, 2048) ?? str(idOf(object.context), 2048);
  const coll = collection(core.db, conversations);
  if (uri) {
    const found = await coll.findOne({ uri });
    if (found) return found._id;
  }
  const id = await nextSerialId(core.db, 'conversations');
  await coll.insertOne({ _id: id, uri: uri ?? null, createdAt: at });
  return id;
}

/** Whether any local account follows the actor (its posts are then wanted here). */
export async function hasLocalFollowers(core: Core, actor: Pick<AccountDoc, '_id'>): Promise<boolean> {
  const rows = await collection(core.db, follows)
    .find({ targetAccountId: actor._id }, { projection: { accountId: 1 } })
    .limit(200)
    .toArray();
  if (rows.length === 0) return false;
  const local = await collection(core.db, accounts).countDocuments(
    { _id: { $in: rows.map((r) => r.accountId) }, domain: null },
    { limit: 1 },
  );
  return local > 0;
}

/** What a new remote status is made of, once its lookups are done (one object or a batch's). */
export interface RemoteStatusParts {
  id: bigint;
  actor: AccountDoc;
  /** The object, its `id` the status's uri. */
  object: JsonObject;
  /** The activity that carried it (addressing fallback). */
  activity: JsonObject | null;
  parent: StatusDoc | null;
  conversationId: bigint | null;
  audience: Audience;
  mediaIds: bigint[];
  quote: StatusQuote | null;
  createdAt: Date;
  now: Date;
}

/** The status document of a new remote object: the one place createRemoteStatus and its bulk form make it. */
export function remoteStatusDoc(p: RemoteStatusParts): StatusDoc {
  const { id, actor, object, parent, audience } = p;
  const uri = object.id as string;
  const { html, language } = contentOf(object);
  const spoilerText = typeIs(object, ...NOTE_TYPES) ? plainText(object.summary, 5000) : '';
  return {
    _id: id,
    accountId: actor._id,
    uri,
    url: pageUrl(object.url, uri) ?? uri,
    local: false,
    text: '',
    content: html,
    spoilerText: spoilerText.replace(/^\u200b$/, ''),
    sensitive: object.sensitive === true || spoilerText !== '',
    language,
    visibility: visibilityOf(object, p.activity, actor.followersUrl),
    inReplyToId: parent?._id ?? null,
    inReplyToAccountId: parent?.accountId ?? null,
    reblogOfId: null,
    reblogOfAccountId: null,
    conversationId: p.conversationId,
    mentions: audience.mentions,
    mentionedAccountIds: audience.mentions.map((m) => m.accountId),
    tags: audience.tags,
    tagNames: tagNamesOf(audience.tags),
    mediaIds: p.mediaIds,
    pollId: null,
    applicationId: null,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    ...(p.quote ? { quote: p.quote } : {}),
    quoteApprovalPolicy: policyFromInteractionPolicy(object.interactionPolicy, actor),
    uniqueKey: postUniqueKey(id),
    createdAt: p.createdAt,
    updatedAt: p.now,
    editedAt: null,
    deletedAt: null,
  };
}

/** The events of a new remote status: StatusCreated, and the fetch of its first page of replies. */
export function remoteStatusEvents(
  status: StatusDoc,
  actor: AccountDoc,
  object: JsonObject,
  opts: { hasPoll: boolean; repliesDepth: number },
): NewEvent[] {
  const repliesJob = firstPageRepliesJob(status, actor.uri, object, opts.repliesDepth);
  return [statusCreatedEvent(status, { hasPoll: opts.hasPoll }), ...(repliesJob ? [repliesJob] : [])];
}

/** The time a new remote status gets: its `published`, unless missing or more than a minute ahead. */
export function createdAtOf(object: JsonObject, now: Date): Date {
  const published = date(object.published);
  return published && published.getTime() <= now.getTime() + 60_000 ? published : now;
}

export interface IngestContext {
  /** The activity that carried the object (addressing fallback), if any. */
  activity?: JsonObject | null;
  /** Delivered to this local account's personal inbox. */
  inboxAccountId?: bigint | null;
  /** Fetched on purpose (search, a boosted post, a parent): always wanted. */
  requested?: boolean;
  /** How many more parents may be fetched for a reply. */
  depth?: number;
  /** How many more levels of its `replies` may be fetched (default FIRST_PAGE_DEPTH; 0: none). */
  repliesDepth?: number;
}

/**
 * Stores a remote Note/Question/... attributed to `actor` (whose host the object id must share).
 * Returns the status (existing or new), or null when it is refused or not wanted.
 */
export async function createRemoteStatus(
  core: Core,
  actor: AccountDoc,
  object: JsonObject,
  ctx: IngestContext = {},
): Promise<StatusDoc | null> {
  const uri = typeof object.id === 'string' ? object.id : null;
  if (!uri || !isStatusObject(object) || actor.domain === null) return null;
  if (hostOf(uri) !== hostOf(actor.uri)) return null;
  const existing = await collection(core.db, statuses).findOne({ uri });
  if (existing) return existing.deletedAt ? null : existing;
  if (await core.redis.exists(deleteMarkerKey(uri))) return null;
  if ((await domainPolicy(core, actor.domain)).rejected) return null;

  const parentUri = idOf(object.inReplyTo);
  let parent = parentUri ? await findStatusByUri(core, parentUri) : null;
  if (parentUri && !parent && (ctx.depth ?? 1) > 0) {
    parent = await fetchRemoteStatus(core, parentUri, { depth: (ctx.depth ?? 1) - 1 }).catch(() => null);
  }
  const [{ mentions, tags }] = await audiencesOf(core, [object]);
  const addressed = [...idsOf(object.to), ...idsOf(object.cc), ...idsOf(ctx.activity?.to), ...idsOf(ctx.activity?.cc)];
  const addressesLocal =
    addressed.some((a) => isLocalUri(core.config, a)) || mentions.some((m) => !m.acct.includes('@'));
  const wanted =
    ctx.requested ||
    (ctx.inboxAccountId ?? null) !== null ||
    addressesLocal ||
    (parent !== null && (parent.local || (await hasLocalFollowers(core, { _id: parent.accountId } as AccountDoc)))) ||
    (await hasLocalFollowers(core, actor));
  if (!wanted) return null;

  // Quote posts: the quoted post (fetched, bounded by the depth, as a parent is) and its approval.
  const quote = await remoteQuoteOf(core, actor, object, uri, (quotedUri) =>
    (ctx.depth ?? 1) > 0
      ? fetchRemoteStatus(core, quotedUri, { depth: (ctx.depth ?? 1) - 1 })
      : findStatusByUri(core, quotedUri),
  );
  const now = new Date();
  const createdAt = createdAtOf(object, now);
  const [id] = await freeStatusIds(core, [createdAt]);
  const media = await createRemoteAttachments(
    core,
    actor._id,
    (await domainPolicy(core, actor.domain)).rejectMedia ? [] : asArray(object.attachment),
  );
  const status = remoteStatusDoc({
    id,
    actor,
    object,
    activity: ctx.activity ?? null,
    parent,
    conversationId: await conversationFor(core, object, parent, createdAt),
    audience: { mentions, tags },
    mediaIds: media.map((m) => m._id),
    quote,
    createdAt,
    now,
  });
  const poll = typeIs(object, 'Question') ? remotePollFrom(object) : null;
  await upsertRemoteEmojis(core, actor.domain, emojiTagsOf(object));
  let inserted = false;
  const events = remoteStatusEvents(status, actor, object, {
    hasPoll: poll !== null,
    repliesDepth: ctx.repliesDepth ?? FIRST_PAGE_DEPTH,
  });
  await core.outbox.write(events, async () => {
    if (poll) status.pollId = (await upsertRemotePoll(core, id, actor._id, poll))._id;
    try {
      await collection(core.db, statuses).insertOne(status);
      inserted = true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    if (inserted && media.length > 0)
      await collection(core.db, mediaAttachments).updateMany(
        { _id: { $in: status.mediaIds } },
        { $set: { statusId: id } },
      );
  });
  if (!inserted) return collection(core.db, statuses).findOne({ uri, deletedAt: null });
  await countNewStatus(core, status);
  if (quote?.state === 'accepted') await countQuote(core, quote.quotedStatusId, 1);
  return status;
}

/**
 * A status by URI: known, or fetched from its origin (the document's id must be the URI, its
 * author on the same host) and stored.
 */
export async function fetchRemoteStatus(
  core: Core,
  uri: string,
  opts: { depth?: number; idUnknown?: boolean; repliesDepth?: number } = {},
): Promise<StatusDoc | null> {
  const known = await findStatusByUri(core, uri);
  if (known || isLocalUri(core.config, uri) || !hostOf(uri)) return known;
  const doc = await fetchDocument(core, uri, { idUnknown: opts.idUnknown });
  return storeFetchedStatus(core, uri, doc, opts);
}

/** Stores a status document fetched from `uri` (see fetchRemoteStatus), or finds it by its id. */
export async function storeFetchedStatus(
  core: Core,
  uri: string,
  doc: JsonObject,
  opts: { depth?: number; repliesDepth?: number } = {},
): Promise<StatusDoc | null> {
  if (!isStatusObject(doc) || typeof doc.id !== 'string') return null;
  if (doc.id !== uri) {
    const again = await findStatusByUri(core, doc.id);
    if (again) return again;
  }
  const authorUri = idOf(doc.attributedTo);
  if (!authorUri || hostOf(authorUri) !== hostOf(doc.id)) return null;
  const author = await resolveActor(core, authorUri);
  if (!author || author.domain === null) return null;
  return createRemoteStatus(core, author, doc, {
    requested: true,
    depth: opts.depth ?? 1,
    repliesDepth: opts.repliesDepth,
  });
}

/** Collections a status of `actor` belongs to, as the actor published them (for `Add`/`Remove`). */
export function featuredOf(actor: AccountDoc): string | null {
  return actor.featuredUrl ?? null;
}
