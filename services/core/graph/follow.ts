// Following an account (Mastodon's FollowService): idempotent; options sent again update the
// existing follow or request (rule 1). A locked or remote target gets a pending request, whose
// options apply from the moment it is accepted.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { follows, type FollowDoc } from '../model/follows.ts';
import { followRequests, type FollowRequestDoc } from '../model/followRequests.ts';
import { forbidden } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { isBlocking } from './relations.ts';
import { adjustFollowCounts } from './counters.ts';
import { graphPair } from './events.ts';

export interface FollowOptions {
  reblogs?: boolean;
  notify?: boolean;
  /** null: all languages. */
  languages?: string[] | null;
  /** ActivityPub id of the Follow activity when a remote account follows (kept for Accept/Reject). */
  activityUri?: string | null;
}

export function followCreatedEvent(
  follow: FollowDoc,
  account: AccountDoc,
  target: AccountDoc,
  fromRequest: boolean,
): NewEvent<'FollowCreated'> {
  return {
    type: 'FollowCreated',
    key: String(account._id),
    payload: {
      followId: String(follow._id),
      ...graphPair(account, target),
      showReblogs: follow.showReblogs,
      notify: follow.notify,
      languages: follow.languages,
      uri: follow.uri,
      fromRequest,
    },
    verify: { collection: follows.name, filter: { _id: follow._id }, expect: 'exists' },
  };
}

/** ActivityPub id of the Follow activity: ours for a local follower, the one received for a remote one. */
function followUri(account: AccountDoc, id: bigint, opts: FollowOptions = {}): string | null {
  return account.domain === null ? `${account.uri}#follows/${id}` : (opts.activityUri ?? null);
}

function optionChanges(opts: FollowOptions): Partial<Pick<FollowDoc, 'showReblogs' | 'notify' | 'languages'>> {
  const set: Partial<Pick<FollowDoc, 'showReblogs' | 'notify' | 'languages'>> = {};
  if (opts.reblogs !== undefined) set.showReblogs = opts.reblogs;
  if (opts.notify !== undefined) set.notify = opts.notify;
  if (opts.languages !== undefined) set.languages = opts.languages;
  return set;
}

/** Follows `target`, or asks to; returns whether a follow or a pending request exists afterwards. */
export async function followAccount(
  core: Core,
  account: AccountDoc,
  target: AccountDoc,
  opts: FollowOptions = {},
): Promise<'following' | 'requested'> {
  if (account._id === target._id) throw forbidden();
  if (target.suspendedAt || target.movedToAccountId) throw forbidden();
  if (await isBlocking(core, target._id, account._id)) throw forbidden();
  if (await isBlocking(core, account._id, target._id)) throw forbidden();
  const changes = optionChanges(opts);

  const existing = await collection(core.db, follows).findOne({ accountId: account._id, targetAccountId: target._id });
  if (existing) {
    if (Object.keys(changes).length > 0)
      await collection(core.db, follows).updateOne({ _id: existing._id }, { $set: changes });
    return 'following';
  }
  const pending = await collection(core.db, followRequests).findOne({
    accountId: account._id,
    targetAccountId: target._id,
  });
  if (pending) {
    if (Object.keys(changes).length > 0)
      await collection(core.db, followRequests).updateOne({ _id: pending._id }, { $set: changes });
    return 'requested';
  }

  // Remote accounts answer a Follow with Accept (or Reject) later: pending until then.
  if (target.locked || target.domain !== null) {
    await requestFollow(core, account, target, opts);
    return 'requested';
  }
  await createFollow(core, account, target, opts, null);
  return 'following';
}

async function requestFollow(core: Core, account: AccountDoc, target: AccountDoc, opts: FollowOptions): Promise<void> {
  const id = await nextSerialId(core.db, 'follow_requests');
  const request: FollowRequestDoc = {
    _id: id,
    accountId: account._id,
    targetAccountId: target._id,
    showReblogs: opts.reblogs ?? true,
    notify: opts.notify ?? false,
    languages: opts.languages ?? null,
    uri: followUri(account, id, opts),
    createdAt: new Date(),
  };
  const event: NewEvent<'FollowRequestCreated'> = {
    type: 'FollowRequestCreated',
    key: String(account._id),
    payload: {
      requestId: String(id),
      ...graphPair(account, target),
      showReblogs: request.showReblogs,
      notify: request.notify,
      uri: request.uri,
    },
    verify: { collection: followRequests.name, filter: { _id: id }, expect: 'exists' },
  };
  await core.outbox.write([event], async () => {
    try {
      await collection(core.db, followRequests).insertOne(request);
    } catch (err) {
      // A concurrent request won; the relay drops our event (its record does not exist).
      if (!isDuplicateKeyError(err)) throw err;
    }
  });
}

/**
 * Inserts the follow (unique per pair) and counts it. `fromRequest` is the accepted request, whose
 * options and Follow activity id the follow keeps. Returns null when a concurrent call won.
 */
export async function createFollow(
  core: Core,
  account: AccountDoc,
  target: AccountDoc,
  opts: FollowOptions,
  fromRequest: FollowRequestDoc | null,
  extraEvents: (follow: FollowDoc) => NewEvent[] = () => [],
): Promise<FollowDoc | null> {
  const id = await nextSerialId(core.db, 'follows');
  const follow: FollowDoc = {
    _id: id,
    accountId: account._id,
    targetAccountId: target._id,
    showReblogs: fromRequest?.showReblogs ?? opts.reblogs ?? true,
    notify: fromRequest?.notify ?? opts.notify ?? false,
    languages: fromRequest?.languages ?? opts.languages ?? null,
    uri: fromRequest?.uri ?? followUri(account, id, opts),
    createdAt: new Date(),
  };
  const events = [...extraEvents(follow), followCreatedEvent(follow, account, target, fromRequest !== null)];
  return core.outbox.write(events, async () => {
    try {
      await collection(core.db, follows).insertOne(follow);
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
    await adjustFollowCounts(core, [follow], 1);
    return follow;
  });
}
