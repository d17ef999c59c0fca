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
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { findLocalAccountByUsername } from '../accounts/create.ts';
import { isBlocking, isFollowing } from '../graph/relations.ts';
import { statusActivityUri, statusRepliesUri } from './uris.ts';
import { renderLocalActor, renderStatusObject } from './render/load.ts';
import { renderAnnounce, renderCreate } from './render/activities.ts';
import { audienceFor } from './render/note.ts';
import { NOTE_CONTEXT, AS_CONTEXT, withContext, type JsonLd } from './render/context.ts';
import { renderCollectionPage, repliesPageUri } from './render/collections.ts';
import { railsBoolean } from '../railsParams.ts';
import { idParam } from './accountCollections.ts';

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
export function assertActive(account: AccountDoc): void {
  if (account.suspendedAt) throw new DocumentUnavailable(403, 'This account is suspended');
}

export async function actorDocument(core: Core, username: string): Promise<JsonLd> {
  return renderLocalActor(core, await servedAccount(core, username));
}

export async function blockedRequester(core: Core, author: AccountDoc, requester: AccountDoc | null): Promise<boolean> {
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
export async function visibleTo(core: Core, author: AccountDoc, requester: AccountDoc | null): Promise<Visibility[]> {
  if (!requester) return ['public', 'unlisted'];
  if (requester._id === author._id) return ['public', 'unlisted', 'private', 'direct'];
  return (await isFollowing(core, requester._id, author._id))
    ? ['public', 'unlisted', 'private']
    : ['public', 'unlisted'];
}

export async function mayRead(
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

export async function announceOf(core: Core, reblog: StatusDoc, booster: AccountDoc): Promise<JsonLd> {
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
