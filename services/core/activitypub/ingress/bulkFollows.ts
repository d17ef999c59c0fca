// Many remote Follows and Undos of Follows at once (the ingress batch's, one per actor): the same
// rules, documents, counters and events as `onFollow`/`followAccount` and `unfollowAccount`, with
// the reads of the whole set in one query each (the local targets, the follows and requests
// between the actors and the targets, blocks both ways, the targets' domain blocks) and the writes
// in one outbox write (one insertMany of the follows, or one conditional delete per record so a
// counter moves only for what this call removed, and one bulk write of the counters).
// What is not a plain case (already following or requested, refused, a silenced sender, a locked
// target, an Undo naming the Follow only by id) is handed back for the one-by-one path.
import type { Core } from '../../context.ts';
import { nextSerialIds } from '../../ids.ts';
import { collection, insertNew } from '../../db/mongo.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { follows, type FollowDoc } from '../../model/follows.ts';
import { followRequests } from '../../model/followRequests.ts';
import { blocks } from '../../model/blocks.ts';
import { accountDomainBlocks } from '../../model/accountDomainBlocks.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { followCreatedEvent } from '../../graph/follow.ts';
import { followDeletedEvent } from '../../graph/unfollow.ts';
import { firstType, idOf, obj, str, type JsonObject } from '../json.ts';
import { parseLocalUri } from '../uris.ts';
import { accountsByUri } from './audience.ts';
import { adjustFollowCounts } from '../../graph/counters.ts';

export interface RemoteFollow {
  actor: AccountDoc;
  activity: JsonObject;
}

/** The local actor a Follow (or the Follow an Undo embeds) names, or null: not for the bulk path. */
function localTargetUri(follow: JsonObject): string | null {
  return idOf(follow.object);
}

function isLocalActorUri(core: Core, uri: string | null): uri is string {
  const parsed = uri ? parseLocalUri(core.config, uri) : null;
  return parsed?.kind === 'actor' || parsed?.kind === 'profile';
}

/** A Follow the bulk path takes: of a local actor. */
export function bulkFollowCandidate(core: Core, activity: JsonObject): boolean {
  return isLocalActorUri(core, localTargetUri(activity));
}

/** An Undo the bulk path takes: of an embedded Follow of a local actor, by this actor. */
export function bulkUndoFollowCandidate(core: Core, actor: AccountDoc, activity: JsonObject): boolean {
  const inner = obj(activity.object);
  if (!inner || firstType(inner) !== 'Follow') return false;
  const innerActor = idOf(inner.actor);
  if (innerActor !== null && innerActor !== actor.uri) return false;
  return isLocalActorUri(core, localTargetUri(inner));
}

/** The local targets of `items` (usable ones: no pending user), by the follow's object uri. */
async function targetsOf(core: Core, uris: string[]): Promise<Map<string, AccountDoc>> {
  const found = await accountsByUri(core, uris);
  for (const [uri, a] of found) if (a.domain !== null || a.pendingUser) found.delete(uri);
  return found;
}

const pairKey = (accountId: bigint, targetId: bigint) => `${accountId}:${targetId}`;

/** The follows (or requests) between the actors and the targets, by pair. */
async function recordsBetween<T extends { accountId: bigint; targetAccountId: bigint }>(
  find: (filter: { accountId: { $in: bigint[] }; targetAccountId: { $in: bigint[] } }) => Promise<T[]>,
  actorIds: bigint[],
  targetIds: bigint[],
): Promise<Map<string, T>> {
  const found = await find({ accountId: { $in: actorIds }, targetAccountId: { $in: targetIds } });
  return new Map(found.map((r) => [pairKey(r.accountId, r.targetAccountId), r]));
}

/**
 * Applies the plain Follows of `items` (each: a local, unlocked, available target; no follow or
 * request yet; no block either way; no domain block; a sender not silenced). Returns the indexes
 * of the items the one-by-one path must take.
 */
export async function followRemoteActors(core: Core, items: RemoteFollow[]): Promise<number[]> {
  const single: number[] = [];
  const targets = await targetsOf(
    core,
    items.map((f) => localTargetUri(f.activity) ?? ''),
  );
  const todo = items.flatMap((f, i) => {
    const target = targets.get(localTargetUri(f.activity) ?? '');
    // An unknown target: the single path ignores it too.
    return target && target._id !== f.actor._id ? [{ i, actor: f.actor, target, uri: str(f.activity.id, 2048) }] : [];
  });
  if (todo.length === 0) return single;
  const actorIds = [...new Set(todo.map((t) => t.actor._id))];
  const targetIds = [...new Set(todo.map((t) => t.target._id))];
  const domains = [...new Set(todo.map((t) => t.actor.domain!))];
  const [existing, pending, blocked, domainBlocked, policies] = await Promise.all([
    recordsBetween((f) => collection(core.db, follows).find(f).toArray(), actorIds, targetIds),
    recordsBetween((f) => collection(core.db, followRequests).find(f).toArray(), actorIds, targetIds),
    collection(core.db, blocks)
      .find({
        $or: [
          { accountId: { $in: targetIds }, targetAccountId: { $in: actorIds } },
          { accountId: { $in: actorIds }, targetAccountId: { $in: targetIds } },
        ],
      })
      .toArray()
      .then((found) => new Set(found.flatMap((b) => [pairKey(b.accountId, b.targetAccountId)]))),
    collection(core.db, accountDomainBlocks)
      .find({ accountId: { $in: targetIds }, domain: { $in: domains } })
      .toArray()
      .then((found) => new Set(found.map((b) => `${b.accountId}:${b.domain}`))),
    Promise.all(domains.map(async (d) => [d, await domainPolicy(core, d)] as const)).then((p) => new Map(p)),
  ]);
  const plain = todo.filter((t) => {
    const { actor, target } = t;
    const simple =
      !existing.has(pairKey(actor._id, target._id)) &&
      !pending.has(pairKey(actor._id, target._id)) &&
      !blocked.has(pairKey(target._id, actor._id)) &&
      !blocked.has(pairKey(actor._id, target._id)) &&
      !domainBlocked.has(`${target._id}:${actor.domain}`) &&
      !target.locked &&
      target.suspendedAt === null &&
      target.movedToAccountId === null &&
      actor.silencedAt === null &&
      !policies.get(actor.domain!)?.silenced;
    if (!simple) single.push(t.i);
    return simple;
  });
  if (plain.length === 0) return single;
  const ids = await nextSerialIds(core.db, 'follows', plain.length);
  const createdAt = new Date();
  const docs: FollowDoc[] = plain.map((t, k) => ({
    _id: ids[k]!,
    accountId: t.actor._id,
    targetAccountId: t.target._id,
    showReblogs: true,
    notify: false,
    languages: null,
    uri: t.uri,
    createdAt,
  }));
  await core.outbox.write(
    docs.map((d, k) => followCreatedEvent(d, plain[k]!.actor, plain[k]!.target, false)),
    async () => {
      // A concurrent follow of the same pair may have won (its event counts, ours is dropped by the relay).
      const stored = await insertNew(collection(core.db, follows), docs);
      await adjustFollowCounts(core, stored, 1);
    },
  );
  return single;
}

/**
 * `unfollowAccount` for the Undos of `items` (see bulkUndoFollowCandidate): the follow and the
 * pending request of each pair end, with their events, and the counts of the follows removed.
 * Remote followers own no lists, so there are no list memberships to end.
 */
export async function unfollowRemoteActors(core: Core, items: RemoteFollow[]): Promise<void> {
  const innerTarget = (u: RemoteFollow) => localTargetUri(obj(u.activity.object)!) ?? '';
  const targets = await targetsOf(core, items.map(innerTarget));
  const pairs = items.flatMap((u) => {
    const target = targets.get(innerTarget(u));
    return target ? [{ actor: u.actor, target }] : [];
  });
  if (pairs.length === 0) return;
  const actorIds = [...new Set(pairs.map((p) => p.actor._id))];
  const targetIds = [...new Set(pairs.map((p) => p.target._id))];
  const [followed, requested] = await Promise.all([
    recordsBetween((f) => collection(core.db, follows).find(f).toArray(), actorIds, targetIds),
    recordsBetween((f) => collection(core.db, followRequests).find(f).toArray(), actorIds, targetIds),
  ]);
  const ends = pairs.flatMap(({ actor, target }) => {
    const key = pairKey(actor._id, target._id);
    const follow = followed.get(key);
    const request = requested.get(key);
    return [
      ...(follow ? [{ actor, target, record: follow, pending: false }] : []),
      ...(request ? [{ actor, target, record: request, pending: true }] : []),
    ];
  });
  if (ends.length === 0) return;
  await core.outbox.write(
    ends.map((e) =>
      followDeletedEvent(e.record, e.actor, e.target, e.pending, e.pending ? 'REQUEST_WITHDRAWN' : 'UNFOLLOW', e.actor),
    ),
    async () => {
      const removed = await Promise.all(
        ends.map(
          async (e) =>
            (e.pending
              ? await collection(core.db, followRequests).deleteOne({ _id: e.record._id })
              : await collection(core.db, follows).deleteOne({ _id: e.record._id })
            ).deletedCount > 0,
        ),
      );
      // Only follows this call removed are counted (a concurrent call counts its own).
      await adjustFollowCounts(
        core,
        ends.filter((e, k) => removed[k] && !e.pending).map((e) => e.record),
        -1,
      );
    },
  );
}
