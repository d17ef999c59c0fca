// Activities in the shapes Mastodon sends (federation reference §6.3-6.4). Pure functions over
// ids and already-rendered objects; the delivery pipeline decides who receives them. Activities
// that embed a Note carry the Note context; actor updates the actor context; the rest the bare
// AS2 context (as Mastodon: Follow, Accept, Like ... have no addressing).
import type { Config } from '../../config.ts';
import { AS_PUBLIC, activityIds, instanceActorUri } from '../uris.ts';
import { ACTOR_CONTEXT, AS_CONTEXT, HASHTAG_CONTEXT, NOTE_CONTEXT, withContext, type JsonLd } from './context.ts';
import type { Audience } from './note.ts';

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Create{Note|Question}: id `<status>/activity`, addressing copied from the note. */
export function renderCreate(note: JsonLd, activityId: string): JsonLd {
  return withContext(NOTE_CONTEXT, {
    id: activityId,
    type: 'Create',
    actor: note.attributedTo,
    published: note.published,
    to: note.to,
    cc: note.cc,
    object: note,
  });
}

/** Update{Note|Question} after an edit (or a poll tally change): id `<status>#updates/<unix>`. */
export function renderUpdateNote(note: JsonLd, at: Date): JsonLd {
  return withContext(NOTE_CONTEXT, {
    id: activityIds.update(String(note.id), at),
    type: 'Update',
    actor: note.attributedTo,
    published: iso(at),
    to: note.to,
    cc: note.cc,
    object: note,
  });
}

/** Update{Person}: a profile change (or suspension flag) of a local actor. */
export function renderUpdateActor(actor: JsonLd, at: Date): JsonLd {
  const { '@context': _ignored, ...object } = actor;
  void _ignored;
  return withContext(ACTOR_CONTEXT, {
    id: activityIds.update(String(object.id), at),
    type: 'Update',
    actor: object.id,
    to: [AS_PUBLIC],
    object,
  });
}

/** Delete{Tombstone} of a status; always addressed to Public, as Mastodon. */
export function renderDeleteStatus(actor: string, statusUri: string): JsonLd {
  return withContext([AS_CONTEXT, { ostatus: 'http://ostatus.org#', atomUri: 'ostatus:atomUri' }], {
    id: activityIds.deleteStatus(statusUri),
    type: 'Delete',
    actor,
    to: [AS_PUBLIC],
    object: { id: statusUri, type: 'Tombstone', atomUri: statusUri },
  });
}

/** Delete{actor}: the account is gone. */
export function renderDeleteActor(actor: string): JsonLd {
  return withContext(ACTOR_CONTEXT, {
    id: activityIds.deleteActor(actor),
    type: 'Delete',
    actor,
    to: [AS_PUBLIC],
    object: actor,
  });
}

export interface AnnounceInput {
  /** `<booster>/statuses/<reblogId>/activity`. */
  id: string;
  actor: string;
  /** The boosted status' id (or the embedded Note for a self-boost of a followers-only post). */
  object: string | JsonLd;
  /** Author of the boosted status: prepended to cc. */
  objectAuthor: string;
  audience: Audience;
  published: Date;
}

export function renderAnnounce(input: AnnounceInput): JsonLd {
  const cc = [input.objectAuthor, ...input.audience.cc.filter((x) => x !== input.objectAuthor)];
  return withContext(AS_CONTEXT, {
    id: input.id,
    type: 'Announce',
    actor: input.actor,
    published: iso(input.published),
    to: input.audience.to,
    cc,
    object: input.object,
  });
}

/** Undo of an activity we sent (Announce, Like, Follow, Block); `to` only for Announce (Mastodon: Public). */
export function renderUndo(id: string, actor: string, activity: JsonLd): JsonLd {
  const { '@context': _ignored, ...object } = activity;
  void _ignored;
  const out: JsonLd = { id, type: 'Undo', actor };
  if (object.type === 'Announce') out.to = [AS_PUBLIC];
  out.object = object;
  return withContext(AS_CONTEXT, out);
}

export function renderLike(id: string, actor: string, objectUri: string): JsonLd {
  return withContext(AS_CONTEXT, { id, type: 'Like', actor, object: objectUri });
}

export function renderFollow(id: string, actor: string, target: string): JsonLd {
  return withContext(AS_CONTEXT, { id, type: 'Follow', actor, object: target });
}

/** Accept{Follow}: `follow` is the original Follow (its id as the follower sent it). */
export function renderAccept(id: string, actor: string, follow: { id: string | null; actor: string }): JsonLd {
  const object: JsonLd = follow.id
    ? { id: follow.id, type: 'Follow', actor: follow.actor, object: actor }
    : { type: 'Follow', actor: follow.actor, object: actor };
  return withContext(AS_CONTEXT, { id, type: 'Accept', actor, object });
}

/** Reject{Follow}: a refused request or a removed follower. */
export function renderReject(id: string, actor: string, follow: { id: string | null; actor: string }): JsonLd {
  const object: JsonLd = follow.id
    ? { id: follow.id, type: 'Follow', actor: follow.actor, object: actor }
    : { type: 'Follow', actor: follow.actor, object: actor };
  return withContext(AS_CONTEXT, { id, type: 'Reject', actor, object });
}

export function renderBlock(id: string, actor: string, target: string): JsonLd {
  return withContext(AS_CONTEXT, { id, type: 'Block', actor, object: target });
}

/** Add/Remove of a pinned status: no id, as Mastodon. */
export function renderPin(kind: 'Add' | 'Remove', actor: string, featuredUri: string, statusUri: string): JsonLd {
  return withContext(AS_CONTEXT, { type: kind, actor, target: featuredUri, object: statusUri });
}

/** Add/Remove of a featured hashtag: target is the `featured` collection, as Mastodon. */
export function renderFeaturedTag(
  config: Config,
  kind: 'Add' | 'Remove',
  actor: string,
  featuredUri: string,
  tag: { name: string; href: string },
): JsonLd {
  void config;
  return withContext(HASHTAG_CONTEXT, {
    type: kind,
    actor,
    target: featuredUri,
    object: { type: 'Hashtag', href: tag.href, name: `#${tag.name}` },
  });
}

export function renderMove(id: string, actor: string, target: string): JsonLd {
  return withContext(AS_CONTEXT, { id, type: 'Move', target, actor, object: actor });
}

/** Flag (report), sent by the instance actor so the reporter stays anonymous. */
export function renderFlag(config: Config, id: string, content: string, objects: string[]): JsonLd {
  return withContext(AS_CONTEXT, {
    id,
    type: 'Flag',
    actor: instanceActorUri(config),
    content,
    object: objects,
  });
}

/** A poll vote: Create{Note name=option} to the poll's author, one per chosen option. */
export function renderVote(input: {
  voteId: string;
  actor: string;
  pollUri: string;
  pollAuthor: string;
  option: string;
}): JsonLd {
  return withContext(AS_CONTEXT, {
    id: `${input.voteId}/activity`,
    type: 'Create',
    actor: input.actor,
    to: input.pollAuthor,
    object: {
      id: input.voteId,
      type: 'Note',
      name: input.option,
      attributedTo: input.actor,
      inReplyTo: input.pollUri,
      to: input.pollAuthor,
    },
  });
}
