// The ActivityPub documents we serve (federation reference §3-5): actors, statuses and their
// Create/Announce, outbox, followers/following, featured and featured tags, as Mastodon shapes and
// pages them. Who may see what: public and unlisted to anyone (unless the author blocks the signed
// requester or its domain), followers-only to signed followers and mentioned accounts, direct to
// mentioned accounts; suspended accounts' content is 403, gone accounts' 410.
import type { Core } from '../context.ts';
import { DomainError } from '../errors.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc, type Visibility } from '../model/statuses.ts';
import { follows } from '../model/follows.ts';
import { pins } from '../model/pins.ts';
import { featuredTags } from '../model/featuredTags.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { findLocalAccountByUsername } from '../accounts/create.ts';
import { isBlocking, isFollowing } from '../graph/relations.ts';
import { actorCollections, statusActivityUri, statusRepliesUri, localBase } from './uris.ts';
import { renderLocalActor, renderStatusObject } from './render/load.ts';
import { renderAnnounce, renderCreate } from './render/activities.ts';
import { audienceFor } from './render/note.ts';
import { NOTE_CONTEXT, AS_CONTEXT, withContext, type JsonLd } from './render/context.ts';
import {
  renderFeaturedCollection,
  renderFeaturedTagsCollection,
  renderCollectionPage,
  renderOrderedCollection,
  renderOrderedPage,
  repliesPageUri,
} from './render/collections.ts';
import { railsBoolean } from '../railsParams.ts';

/** Why a document is not served. */
export class DocumentUnavailable extends DomainError {
  readonly status: 403 | 404 | 410;
  constructor(status: 403 | 404 | 410, message: string) {
    super(status, status === 404 ? 'Record not found' : message);
    this.message = message;
    this.status = status;
  }
}

const notFound = () => new DocumentUnavailable(404, 'Record not found');

/** A local account that serves documents: confirmed, approved. */
export async function servedAccount(core: Core, username: string): Promise<AccountDoc> {
  const account = await findLocalAccountByUsername(core, username);
  if (!account || account.pendingUser) throw notFound();
  return account;
}

/** Statuses, outbox and collections of a suspended account answer 403 (its actor stays, flagged). */
function assertActive(account: AccountDoc): void {
  if (account.suspendedAt) throw new DocumentUnavailable(403, 'This account is suspended');
}

export async function actorDocument(core: Core, username: string): Promise<JsonLd> {
  return renderLocalActor(core, await servedAccount(core, username));
}

async function blockedRequester(core: Core, author: AccountDoc, requester: AccountDoc | null): Promise<boolean> {
  if (!requester) return false;
  if (await isBlocking(core, author._id, requester._id)) return true;
  if (requester.domain === null) return false;
  const domainBlocked = await collection(core.db, accountDomainBlocks).countDocuments(
    { accountId: author._id, domain: requester.domain },
    { limit: 1 },
  );
  return domainBlocked > 0;
}

/** Which visibilities of `author`'s statuses the requester may read. */
async function visibleTo(core: Core, author: AccountDoc, requester: AccountDoc | null): Promise<Visibility[]> {
  if (!requester) return ['public', 'unlisted'];
  if (requester._id === author._id) return ['public', 'unlisted', 'private', 'direct'];
  return (await isFollowing(core, requester._id, author._id))
    ? ['public', 'unlisted', 'private']
    : ['public', 'unlisted'];
}

async function mayRead(
  core: Core,
  status: StatusDoc,
  author: AccountDoc,
  requester: AccountDoc | null,
): Promise<boolean> {
  if (await blockedRequester(core, author, requester)) return false;
  if (status.visibility === 'public' || status.visibility === 'unlisted') return true;
  if (!requester) return false;
  if (requester._id === author._id || status.mentionedAccountIds.includes(requester._id)) return true;
  return status.visibility === 'private' && (await isFollowing(core, requester._id, author._id));
}

async function findServedStatus(core: Core, author: AccountDoc, id: Id): Promise<StatusDoc> {
  const status = await collection(core.db, statuses).findOne({ _id: id, accountId: author._id });
  if (!status || status.deletedAt || !status.local) throw notFound();
  return status;
}

/** A status as Note/Question (or, for a reblog, its Announce), if the requester may read it. */
export async function statusDocument(
  core: Core,
  username: string,
  id: Id,
  requester: AccountDoc | null,
  asActivity: boolean,
): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  assertActive(author);
  const status = await findServedStatus(core, author, id);
  if (!(await mayRead(core, status, author, requester))) throw notFound();
  if (status.reblogOfId !== null) return announceOf(core, status, author);
  const note = await renderStatusObject(core, status, author);
  if (!asActivity) return withContext(NOTE_CONTEXT, note);
  return renderCreate(note, statusActivityUri(core.config, author.username, status._id));
}

async function announceOf(core: Core, reblog: StatusDoc, booster: AccountDoc): Promise<JsonLd> {
  const original = reblog.reblogOfId ? await collection(core.db, statuses).findOne({ _id: reblog.reblogOfId }) : null;
  const originalAuthor = reblog.reblogOfAccountId
    ? await collection(core.db, accounts).findOne({ _id: reblog.reblogOfAccountId }, { projection: { uri: 1 } })
    : null;
  if (!original || !originalAuthor) throw notFound();
  return renderAnnounce({
    id: statusActivityUri(core.config, booster.username, reblog._id),
    actor: booster.uri,
    object: original.uri,
    objectAuthor: originalAuthor.uri,
    audience: audienceFor(reblog.visibility, booster.followersUrl, []),
    published: reblog.createdAt,
  });
}

export interface RepliesQuery {
  page?: string;
  only_other_accounts?: string;
  min_id?: string;
}

/** Replies per page of a `replies` collection (Mastodon's DESCENDANTS_LIMIT). */
export const REPLIES_PAGE = 60;

/**
 * A status's `replies` as Mastodon's RepliesController serves it: public and unlisted replies,
 * oldest first by `min_id`; the author's own first, then (`only_other_accounts`) everybody else's
 * but suspended accounts'. Local replies are embedded as Notes, remote ones are their ids. Without
 * `page` the Collection with this page as `first`.
 */
export async function repliesDocument(
  core: Core,
  username: string,
  id: Id,
  requester: AccountDoc | null,
  query: RepliesQuery = {},
): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  assertActive(author);
  const status = await findServedStatus(core, author, id);
  if (!(await mayRead(core, status, author, requester))) throw notFound();
  const otherAccounts = railsBoolean(query.only_other_accounts) === true;
  const minId = idParam(query.min_id);
  const replies = await replyPage(core, status, otherAccounts, minId);
  const uri = statusRepliesUri(status.uri);
  const last = replies.length > 0 ? replies[replies.length - 1] : null;
  let next: string | null;
  if (otherAccounts) {
    next =
      replies.length < REPLIES_PAGE || !last
        ? null
        : repliesPageUri(uri, { minId: last._id, onlyOtherAccounts: 'true' });
  } else {
    // The author's own replies first; once they run out, the next page is everybody else's.
    const nextOthers = !last || last.accountId !== author._id || replies.length < REPLIES_PAGE;
    next = repliesPageUri(uri, {
      minId: nextOthers ? null : last._id,
      onlyOtherAccounts: nextOthers ? 'true' : 'false',
    });
  }
  const localAuthors = new Map<Id, AccountDoc>();
  const localIds = [...new Set(replies.filter((r) => r.local).map((r) => r.accountId))];
  if (localIds.length > 0)
    for (const a of await collection(core.db, accounts)
      .find({ _id: { $in: localIds } })
      .toArray())
      localAuthors.set(a._id, a);
  const items: unknown[] = [];
  for (const r of replies) {
    const replyAuthor = r.local ? localAuthors.get(r.accountId) : undefined;
    items.push(replyAuthor ? await renderStatusObject(core, r, replyAuthor) : r.uri);
  }
  const page = renderCollectionPage({
    id: repliesPageUri(uri, {
      minId: query.min_id !== undefined && query.min_id !== '' ? query.min_id : null,
      onlyOtherAccounts:
        query.only_other_accounts !== undefined && query.only_other_accounts !== '' ? query.only_other_accounts : null,
    }),
    partOf: uri,
    items,
    next,
  });
  const context = replies.some((r) => r.local) ? NOTE_CONTEXT : AS_CONTEXT;
  if (railsBoolean(query.page) === true) return withContext(context, page);
  return withContext(context, { id: uri, type: 'Collection', first: page });
}

/** One page of replies (see repliesDocument), skipping suspended authors without shortening it. */
async function replyPage(
  core: Core,
  status: StatusDoc,
  otherAccounts: boolean,
  minId: Id | null,
): Promise<StatusDoc[]> {
  const out: StatusDoc[] = [];
  let after = minId;
  for (;;) {
    const filter: Record<string, unknown> = {
      inReplyToId: status._id,
      deletedAt: null,
      visibility: { $in: ['public', 'unlisted'] },
      accountId: otherAccounts ? { $ne: status.accountId } : status.accountId,
    };
    if (after !== null) filter._id = { $gt: after };
    const want = REPLIES_PAGE - out.length;
    const batch = await collection(core.db, statuses).find(filter).sort({ _id: 1 }).limit(want).toArray();
    if (batch.length === 0) return out;
    let kept = batch;
    if (otherAccounts) {
      const suspended = await collection(core.db, accounts)
        .find(
          { _id: { $in: [...new Set(batch.map((r) => r.accountId))] }, suspendedAt: { $ne: null } },
          {
            projection: { _id: 1 },
          },
        )
        .toArray();
      const gone = new Set(suspended.map((a) => a._id));
      kept = batch.filter((r) => !gone.has(r.accountId));
    }
    out.push(...kept);
    if (out.length >= REPLIES_PAGE || batch.length < want) return out;
    after = batch[batch.length - 1]._id;
  }
}

export async function countCollectionDocument(
  core: Core,
  username: string,
  id: Id,
  which: 'likes' | 'shares',
  requester: AccountDoc | null,
): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  assertActive(author);
  const status = await findServedStatus(core, author, id);
  if (!(await mayRead(core, status, author, requester))) throw notFound();
  return withContext(AS_CONTEXT, {
    id: `${status.uri}/${which}`,
    type: 'Collection',
    totalItems: which === 'likes' ? status.favouritesCount : status.reblogsCount,
  });
}

const OUTBOX_PAGE = 20;

export interface OutboxQuery {
  page?: string;
  max_id?: string;
  min_id?: string;
}

function idParam(value: string | undefined): bigint | null {
  return value !== undefined && /^\d{1,19}$/.test(value) ? BigInt(value) : null;
}

/** Outbox: the collection (count, first, last) or a page of Create/Announce, newest first. */
export async function outboxDocument(
  core: Core,
  username: string,
  query: OutboxQuery,
  requester: AccountDoc | null,
): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  assertActive(author);
  const { outbox } = actorCollections(core.config, author.username);
  if (query.page !== 'true' && query.page !== '1') {
    const out = renderOrderedCollection(outbox, author.statusesCount, `${outbox}?page=true`);
    return { ...out, last: `${outbox}?min_id=0&page=true` };
  }
  if (await blockedRequester(core, author, requester))
    return renderOrderedPage({ id: `${outbox}?page=true`, partOf: outbox, items: [] });
  const visibilities = await visibleTo(core, author, requester);
  const maxId = idParam(query.max_id);
  const minId = idParam(query.min_id);
  const filter: Record<string, unknown> = {
    accountId: author._id,
    deletedAt: null,
    visibility: { $in: visibilities.filter((v) => v !== 'direct') },
  };
  if (maxId !== null) filter._id = { $lt: maxId };
  else if (minId !== null) filter._id = { $gt: minId };
  let page = await collection(core.db, statuses)
    .find(filter)
    .sort({ _id: minId !== null && maxId === null ? 1 : -1 })
    .limit(OUTBOX_PAGE)
    .toArray();
  if (minId !== null && maxId === null) page = page.reverse();
  const items: JsonLd[] = [];
  for (const s of page) {
    const activity =
      s.reblogOfId !== null
        ? await announceOf(core, s, author).catch(() => null)
        : renderCreate(
            await renderStatusObject(core, s, author),
            statusActivityUri(core.config, author.username, s._id),
          );
    if (!activity) continue;
    const { '@context': _c, ...item } = activity;
    void _c;
    items.push(item);
  }
  const pageId =
    maxId !== null
      ? `${outbox}?max_id=${maxId}&page=true`
      : minId !== null
        ? `${outbox}?min_id=${minId}&page=true`
        : `${outbox}?page=true`;
  return renderOrderedPage({
    id: pageId,
    partOf: outbox,
    items,
    next: page.length === OUTBOX_PAGE ? `${outbox}?max_id=${page[page.length - 1]._id}&page=true` : null,
    prev: page.length > 0 ? `${outbox}?min_id=${page[0]._id}&page=true` : null,
  });
}

const FOLLOWS_PAGE = 12;

/** Followers or following: counts only when hidden (pages then 403), else pages of actor ids. */
export async function followsDocument(
  core: Core,
  username: string,
  which: 'followers' | 'following',
  pageParam: string | undefined,
): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const c = actorCollections(core.config, owner.username);
  const id = which === 'followers' ? c.followers : c.following;
  const total = which === 'followers' ? owner.followersCount : owner.followingCount;
  if (pageParam === undefined) return renderOrderedCollection(id, total, owner.hideCollections ? null : `${id}?page=1`);
  if (owner.hideCollections) throw new DocumentUnavailable(403, 'This collection is hidden');
  const page = /^\d{1,6}$/.test(pageParam) ? Math.max(1, Number(pageParam)) : 1;
  const filter = which === 'followers' ? { targetAccountId: owner._id } : { accountId: owner._id };
  const rows = await collection(core.db, follows)
    .find(filter, { projection: { accountId: 1, targetAccountId: 1 } })
    .sort({ _id: -1 })
    .skip((page - 1) * FOLLOWS_PAGE)
    .limit(FOLLOWS_PAGE)
    .toArray();
  const ids = rows.map((r) => (which === 'followers' ? r.accountId : r.targetAccountId));
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids } }, { projection: { uri: 1 } })
    .toArray();
  const uriById = new Map(found.map((a) => [a._id, a.uri]));
  return renderOrderedPage(
    {
      id: `${id}?page=${page}`,
      totalItems: total,
      partOf: id,
      items: ids.map((i) => uriById.get(i)).filter((u): u is string => u !== undefined),
      next: rows.length === FOLLOWS_PAGE ? `${id}?page=${page + 1}` : null,
      prev: page > 1 ? `${id}?page=${page - 1}` : null,
    },
    AS_CONTEXT,
  );
}

/** Pinned statuses: public/unlisted ones embedded, others as ids (only for readers who may see them). */
export async function featuredDocument(core: Core, username: string, requester: AccountDoc | null): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const { featured } = actorCollections(core.config, owner.username);
  if (await blockedRequester(core, owner, requester)) return renderFeaturedCollection(featured, []);
  const pinned = await collection(core.db, pins).find({ accountId: owner._id }).sort({ _id: -1 }).toArray();
  const found = await collection(core.db, statuses)
    .find({ _id: { $in: pinned.map((p) => p.statusId) }, deletedAt: null })
    .toArray();
  const byId = new Map(found.map((s) => [s._id, s]));
  const items: unknown[] = [];
  for (const pin of pinned) {
    const s = byId.get(pin.statusId);
    if (!s) continue;
    if (s.visibility === 'public' || s.visibility === 'unlisted') items.push(await renderStatusObject(core, s, owner));
    else if (await mayRead(core, s, owner, requester)) items.push(s.uri);
  }
  return renderFeaturedCollection(featured, items);
}

export async function featuredTagsDocument(core: Core, username: string): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const { featuredTags: id } = actorCollections(core.config, owner.username);
  const tags = await collection(core.db, featuredTags).find({ accountId: owner._id }).sort({ _id: 1 }).toArray();
  return renderFeaturedTagsCollection(
    id,
    tags.map((t) => ({
      name: t.name,
      href: `${localBase(core.config)}/@${owner.username}/tagged/${encodeURIComponent(t.nameNormalized)}`,
    })),
  );
}
