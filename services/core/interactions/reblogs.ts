// Reblogs: a status of the booster pointing at the original. One live reblog per (account,
// original), enforced by the statuses' unique key, so concurrent requests cannot double it.
import { dropViewerFlags } from './viewerFlags.ts';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, reblogUniqueKey, type StatusDoc, type Visibility } from '../model/statuses.ts';
import { canReblog } from '../statuses/visibility.ts';
import { statusForbidden, statusValidation } from '../statuses/errors.ts';
import { localReblogUri } from '../statuses/urls.ts';
import { reblogCreatedEvent } from '../statuses/events.ts';
import { removeReblog } from '../statuses/deleteStatus.ts';
import { users } from '../model/users.ts';
import { countOnce } from '../db/countOnce.ts';

export async function findReblog(core: Core, account: AccountDoc, original: StatusDoc): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({ uniqueKey: reblogUniqueKey(account._id, original._id) });
}

/** Reblogs a visible status (idempotent: an existing reblog is returned). */
export async function reblogStatus(
  core: Core,
  account: AccountDoc,
  original: StatusDoc,
  requested: Visibility | null,
): Promise<StatusDoc> {
  if (original.reblogOfId !== null) throw statusValidation('Reblog of a reblog');
  const existing = await findReblog(core, account, original);
  if (existing) return existing;
  if (!(await canReblog(core, account, original))) throw statusForbidden();
  if (requested === 'direct') throw statusValidation('Visibility is not included in the list');
  const user = await collection(core.db, users).findOne({ accountId: account._id });
  const preferred = requested ?? user?.settings.defaultPrivacy ?? 'public';
  // A private original keeps its audience (Mastodon: hidden statuses are reblogged as they are).
  const visibility: Visibility =
    original.visibility === 'private' ? 'private' : preferred === 'direct' ? 'public' : preferred;
  const id = await core.statusIds.next();
  const uri = localReblogUri(core.config, account.username, id);
  const reblog = await insertReblog(core, { id, account, original, uri, visibility, createdAt: new Date() });
  if (reblog) return reblog;
  const winner = await findReblog(core, account, original);
  if (!winner) throw statusForbidden();
  return winner;
}

export interface NewReblog {
  id: Id;
  account: AccountDoc;
  original: StatusDoc;
  /** ActivityPub id: ours for a local booster, the Announce's id for a remote one. */
  uri: string;
  visibility: Visibility;
  createdAt: Date;
}

/** The status document of a reblog (local or remote). */
export function reblogDoc(r: NewReblog): StatusDoc {
  const { account, original } = r;
  return {
    _id: r.id,
    accountId: account._id,
    uri: r.uri,
    url: null,
    local: account.domain === null,
    text: '',
    content: '',
    spoilerText: '',
    sensitive: false,
    language: null,
    visibility: r.visibility,
    inReplyToId: null,
    inReplyToAccountId: null,
    reblogOfId: original._id,
    reblogOfAccountId: original.accountId,
    conversationId: null,
    mentions: [],
    mentionedAccountIds: [],
    tags: [],
    tagNames: [],
    mediaIds: [],
    pollId: null,
    applicationId: null,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    uniqueKey: reblogUniqueKey(account._id, original._id),
    createdAt: r.createdAt,
    updatedAt: new Date(),
    editedAt: null,
    deletedAt: null,
  };
}

/**
 * Stores a reblog (local or remote) with its ReblogCreated event and counters. Null when the
 * booster already has one (the unique key), so concurrent or redelivered reblogs count once.
 */
export async function insertReblog(core: Core, r: NewReblog): Promise<StatusDoc | null> {
  const { account, original } = r;
  const reblog = reblogDoc(r);
  let inserted = false;
  await core.outbox.write([reblogCreatedEvent(reblog)], async () => {
    try {
      await collection(core.db, statuses).insertOne(reblog);
      inserted = true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    if (!inserted) return;
    await collection(core.db, statuses).updateOne({ _id: original._id }, { $inc: { reblogsCount: 1 } });
    await countOnce(collection(core.db, accounts), [
      { _id: account._id, inc: { statusesCount: 1 }, max: { lastStatusAt: r.createdAt }, mark: `s+${reblog._id}` },
    ]);
  });
  if (inserted) await dropViewerFlags(core, account._id);
  return inserted ? reblog : null;
}

export async function unreblogStatus(core: Core, account: AccountDoc, original: StatusDoc): Promise<void> {
  const reblog = await findReblog(core, account, original);
  if (reblog) await removeReblog(core, reblog);
}
