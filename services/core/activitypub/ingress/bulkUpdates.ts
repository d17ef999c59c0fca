// Many remote edits at once (the ingress batch's Update{Note}s, one per actor): `updateRemoteStatus`
// for a set, with the same rules (the actor's own remote status, found by the object id on the
// actor's host; applied only when `updated` is newer than the last edit, so a redelivery changes
// nothing; visibility never changes) and the same documents and events: the statuses, mentioned
// accounts and tags read once, the edit history ids in one block, one outbox write with one
// insertMany of the history and one bulk write of the statuses. Polls and attachments take the
// one-by-one path.
import type { Core } from '../../context.ts';
import { nextSerialIds } from '../../ids.ts';
import { collection } from '../../db/mongo.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { statusEdits, type StatusEditDoc } from '../../model/statusEdits.ts';
import { statusUpdatedEvent } from '../../statuses/events.ts';
import { asArray, obj, typeIs, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import { audiencesOf } from './audience.ts';
import { date } from './statuses.ts';
import { remoteEdit } from './statusEdits.ts';
import { emojiTagsOf } from '../actors.ts';
import { upsertRemoteEmojis } from '../../emojis/remoteEmojis.ts';

export interface RemoteEdit {
  actor: AccountDoc;
  object: JsonObject;
}

/** An Update the bulk path takes: of a Note (no poll, no attachments) on the actor's host. */
export function bulkUpdateCandidate(actor: AccountDoc, activity: JsonObject): JsonObject | null {
  const object = obj(activity.object);
  if (!object || typeof object.id !== 'string' || hostOf(object.id) !== hostOf(actor.uri)) return null;
  if (!typeIs(object, 'Note') || typeIs(object, 'Question') || asArray(object.attachment).length > 0) return null;
  return object;
}

export async function editRemoteStatuses(core: Core, items: RemoteEdit[]): Promise<void> {
  const coll = collection(core.db, statuses);
  const found = new Map(
    (await coll.find({ uri: { $in: items.map((e) => e.object.id as string) }, deletedAt: null }).toArray()).map((s) => [
      s.uri,
      s,
    ]),
  );
  const todo = items.flatMap((e) => {
    const status = found.get(e.object.id as string);
    if (!status || status.accountId !== e.actor._id || status.local) return [];
    const updated = date(e.object.updated);
    if (!updated || updated.getTime() <= (status.editedAt ?? status.createdAt).getTime()) return [];
    return [{ ...e, status, updated }];
  });
  if (todo.length === 0) return;
  const audiences = await audiencesOf(
    core,
    todo.map((e) => e.object),
  );
  const ids = await nextSerialIds(
    core.db,
    'status_edits',
    todo.reduce((n, e) => n + (e.status.editedAt === null ? 2 : 1), 0),
  );
  let next = 0;
  const edits: StatusEditDoc[] = [];
  const now = new Date();
  const updatedDocs: StatusDoc[] = todo.map((e, k) => {
    const made = remoteEdit({
      status: e.status,
      actor: e.actor,
      object: e.object,
      audience: audiences[k]!,
      mediaIds: [],
      pollOptions: null,
      updated: e.updated,
      historyIds: ids.slice(next, (next += e.status.editedAt === null ? 2 : 1)),
      now,
    });
    edits.push(...made.edits);
    return made.next;
  });
  // Custom emoji of the objects (each call returns at once for an object without any).
  await Promise.all(todo.map((e) => upsertRemoteEmojis(core, e.actor.domain, emojiTagsOf(e.object))));
  await core.outbox.write(
    updatedDocs.map((d) => statusUpdatedEvent(d, d.editedAt!, d.pollId !== null)),
    async () => {
      await collection(core.db, statusEdits).insertMany(edits);
      await coll.bulkWrite(
        updatedDocs.map(({ _id, ...fields }) => ({ updateOne: { filter: { _id }, update: { $set: fields } } })),
        { ordered: false },
      );
    },
  );
}
