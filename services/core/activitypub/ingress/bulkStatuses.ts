// Many remote Notes at once (the ingress batch's Creates, one per actor): the same checks and the
// same documents and events as `createRemoteStatus`, in a fixed number of round trips for the whole
// set (known uris, Delete markers, parents, mentioned accounts, tags, local followers, status ids,
// conversations, one outbox write with one insertMany, one bulk write of the counters).
// What needs more than that (attachments, polls, a parent we do not have and must fetch, a poll
// vote) is handed back for the one-by-one path.
import type { Core } from '../../context.ts';
import { nextSerialIds } from '../../ids.ts';
import { collection, insertNew } from '../../db/mongo.ts';
import { countOnce } from '../../db/countOnce.ts';
import { authorStatusCountChanges, countedParentOf, incrementCounts, tally } from '../../statuses/statusCounts.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc, type StatusMention, type StatusTag } from '../../model/statuses.ts';
import { conversations } from '../../model/conversations.ts';
import { accountsByUri, audienceOf, parseTags, tagsByName } from './audience.ts';
import { asArray, idOf, idsOf, str, typeIs, type JsonObject } from '../json.ts';
import { hostOf, isLocalUri, parseLocalUri } from '../uris.ts';
import {
  createdAtOf as createdAt,
  freeStatusIds,
  hasLocalFollowers,
  remoteStatusDoc,
  remoteStatusEvents,
} from './statuses.ts';
import { deleteMarkerKey } from './deleteMarkers.ts';
import { emojiTagsOf } from '../actors.ts';
import { upsertRemoteEmojis } from '../../emojis/remoteEmojis.ts';
import { quotedUriOf } from '../../quotes/ingress.ts';
import { FIRST_PAGE_DEPTH } from '../replies/job.ts';

export interface NewRemoteStatus {
  actor: AccountDoc;
  /** The object, its `id` already the activity's object id. */
  object: JsonObject;
  activity: JsonObject;
  inboxAccountId: bigint | null;
}

/**
 * A Create whose object the bulk path can store: a plain Note of the actor's origin, no media, no
 * poll, no vote, no quote (its quoted post and approval are looked up one by one).
 */
export function bulkCreateCandidate(actor: AccountDoc, object: JsonObject, objectId: string): boolean {
  if (actor.domain === null || hostOf(objectId) === null || hostOf(objectId) !== hostOf(actor.uri)) return false;
  if (!typeIs(object, 'Note') || typeIs(object, 'Question')) return false;
  if (asArray(object.attachment).length > 0 || quotedUriOf(object) !== null) return false;
  // A poll vote (a Note with `name`, no content, replying): the single path checks our polls.
  if (object.name !== undefined && object.name !== null && object.inReplyTo && !object.content) return false;
  return true;
}

const LOCAL_STATUS_KINDS = new Set(['status', 'statusActivity', 'statusPage']);

/** Statuses (not deleted) by ActivityPub id, ours by their id: one query per kind. */
export async function statusesByUri(core: Core, uris: string[]): Promise<Map<string, StatusDoc>> {
  const local = new Map<bigint, string[]>();
  const remote: string[] = [];
  for (const uri of new Set(uris)) {
    const parsed = parseLocalUri(core.config, uri);
    if (parsed && LOCAL_STATUS_KINDS.has(parsed.kind) && 'id' in parsed) {
      const id = parsed.id as bigint;
      local.set(id, [...(local.get(id) ?? []), uri]);
    } else if (!isLocalUri(core.config, uri)) remote.push(uri);
  }
  const coll = collection(core.db, statuses);
  const [ours, theirs] = await Promise.all([
    local.size > 0 ? coll.find({ _id: { $in: [...local.keys()] }, deletedAt: null }).toArray() : [],
    remote.length > 0 ? coll.find({ uri: { $in: remote }, deletedAt: null }).toArray() : [],
  ]);
  const out = new Map<string, StatusDoc>();
  for (const s of ours) for (const uri of local.get(s._id) ?? []) out.set(uri, s);
  for (const s of theirs) out.set(s.uri, s);
  return out;
}

/**
 * Stores the statuses of `items` that are new and wanted. Returns the indexes of the items the
 * one-by-one path must take (a parent to fetch, a uri twice in the set).
 */
export async function createRemoteStatuses(core: Core, items: NewRemoteStatus[]): Promise<number[]> {
  const single: number[] = [];
  const uriOf = (i: number) => items[i]!.object.id as string;
  const seenUris = new Set<string>();
  let todo: number[] = [];
  for (let i = 0; i < items.length; i++) {
    if (seenUris.has(uriOf(i))) single.push(i);
    else {
      seenUris.add(uriOf(i));
      todo.push(i);
    }
  }
  const coll = collection(core.db, statuses);

  // Known already (a redelivery), or refused by a Delete that came first.
  const [existing, markers] = await Promise.all([
    coll.find({ uri: { $in: todo.map(uriOf) } }, { projection: { uri: 1 } }).toArray(),
    Promise.all(todo.map((i) => core.redis.exists(deleteMarkerKey(uriOf(i))))),
  ]);
  const known = new Set(existing.map((s) => s.uri));
  todo = todo.filter((i, k) => !known.has(uriOf(i)) && markers[k] === 0);

  // Parents, mentioned accounts, tags.
  const parsed = new Map(todo.map((i) => [i, parseTags(items[i]!.object)]));
  const parentUriOf = (i: number) => idOf(items[i]!.object.inReplyTo);
  const [parents, mentioned, tagDocs] = await Promise.all([
    statusesByUri(
      core,
      todo.map(parentUriOf).filter((u): u is string => u !== null),
    ),
    accountsByUri(
      core,
      todo.flatMap((i) => parsed.get(i)!.mentionHrefs),
    ),
    tagsByName(
      core,
      todo.flatMap((i) => parsed.get(i)!.tagNames),
    ),
  ]);
  todo = todo.filter((i) => {
    const parentUri = parentUriOf(i);
    if (parentUri && !parents.has(parentUri)) {
      single.push(i); // the parent must be fetched first
      return false;
    }
    return true;
  });

  // Wanted here: addressed to us, a reply in a thread we have, or by someone a local account follows.
  const followed = new Map<bigint, Promise<boolean>>();
  const hasFollowers = (id: bigint) => {
    let p = followed.get(id);
    if (!p) followed.set(id, (p = hasLocalFollowers(core, { _id: id })));
    return p;
  };
  const audience = new Map<number, { mentions: StatusMention[]; tags: StatusTag[] }>();
  const wanted = await Promise.all(
    todo.map(async (i) => {
      const { object, activity, inboxAccountId, actor } = items[i]!;
      const { mentions, tags: tagList } = audienceOf(parsed.get(i)!, mentioned, tagDocs);
      audience.set(i, { mentions, tags: tagList });
      const addressed = [...idsOf(object.to), ...idsOf(object.cc), ...idsOf(activity.to), ...idsOf(activity.cc)];
      const parentUri = parentUriOf(i);
      const parent = parentUri ? parents.get(parentUri)! : null;
      return (
        inboxAccountId !== null ||
        addressed.some((a) => isLocalUri(core.config, a)) ||
        mentions.some((m) => !m.acct.includes('@')) ||
        (parent !== null && (parent.local || (await hasFollowers(parent.accountId)))) ||
        (await hasFollowers(actor._id))
      );
    }),
  );
  todo = todo.filter((_, k) => wanted[k]);
  if (todo.length === 0) return single;

  // Ids and conversations.
  const now = new Date();
  const createdAtOf = new Map(todo.map((i) => [i, createdAt(items[i]!.object, now)]));
  const ids = await freeStatusIds(
    core,
    todo.map((i) => createdAtOf.get(i)!),
  );
  const conversationUriOf = (i: number) =>
    str(items[i]!.object.conversation, 2048) ?? str(idOf(items[i]!.object.context), 2048);
  const threadUris = [
    ...new Set(
      todo
        .filter((i) => !parents.get(parentUriOf(i) ?? '')?.conversationId)
        .map(conversationUriOf)
        .filter((u): u is string => u !== null),
    ),
  ];
  const threads = new Map(
    threadUris.length > 0
      ? (
          await collection(core.db, conversations)
            .find({ uri: { $in: threadUris } })
            .toArray()
        ).map((c) => [c.uri!, c._id])
      : [],
  );
  const needs = todo.filter((i) => {
    if (parents.get(parentUriOf(i) ?? '')?.conversationId) return false;
    const uri = conversationUriOf(i);
    return uri === null || !threads.has(uri);
  });
  const newThreads: Array<{ _id: bigint; uri: string | null; createdAt: Date }> = [];
  const conversationOf = new Map<number, bigint>();
  if (needs.length > 0) {
    const byUri = new Map<string, bigint>();
    const fresh = await nextSerialIds(core.db, 'conversations', needs.length);
    needs.forEach((i, k) => {
      const uri = conversationUriOf(i);
      const reuse = uri !== null ? byUri.get(uri) : undefined;
      if (reuse !== undefined) return conversationOf.set(i, reuse);
      const id = fresh[k]!;
      if (uri !== null) byUri.set(uri, id);
      newThreads.push({ _id: id, uri, createdAt: createdAtOf.get(i)! });
      conversationOf.set(i, id);
    });
    await collection(core.db, conversations).insertMany(newThreads, { ordered: false });
  }

  const docs: StatusDoc[] = todo.map((i, k) => {
    const parent = parents.get(parentUriOf(i) ?? '') ?? null;
    return remoteStatusDoc({
      id: ids[k]!,
      actor: items[i]!.actor,
      object: items[i]!.object,
      activity: items[i]!.activity,
      parent,
      conversationId:
        parent?.conversationId ?? conversationOf.get(i) ?? threads.get(conversationUriOf(i) ?? '') ?? null,
      audience: audience.get(i)!,
      mediaIds: [],
      quote: null,
      createdAt: createdAtOf.get(i)!,
      now,
    });
  });
  // Custom emoji of the objects (each call returns at once for an object without any).
  await Promise.all(todo.map((i) => upsertRemoteEmojis(core, items[i]!.actor.domain, emojiTagsOf(items[i]!.object))));

  const inserted = await core.outbox.write(
    docs.flatMap((s, k) =>
      remoteStatusEvents(s, items[todo[k]!]!.actor, items[todo[k]!]!.object, {
        hasPoll: false,
        repliesDepth: FIRST_PAGE_DEPTH,
      }),
    ),
    // Another consumer may have stored some of them first (a rebalance): count only ours.
    () => insertNew(coll, docs),
  );
  await countNewStatuses(core, inserted);
  return single;
}

/** `countNewStatus` for many: one bulk write per collection. */
async function countNewStatuses(core: Core, docs: StatusDoc[]): Promise<void> {
  const repliedTo = docs.map(countedParentOf).filter((id) => id !== null);
  await Promise.all([
    countOnce(collection(core.db, accounts), authorStatusCountChanges(docs)),
    incrementCounts(collection(core.db, statuses), 'repliesCount', tally(repliedTo)),
  ]);
}
