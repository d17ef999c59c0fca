// Read markers (Mastodon's Marker): one per account and timeline (`home`, `notifications`), whose
// `version` counts the saves. The notifications marker drives the unread counts.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { conflict } from '../errors.ts';
import { markers, type MarkerDoc, type MarkerTimeline } from '../model/markers.ts';

export function markersOf(core: Core, accountId: Id, timelines: readonly MarkerTimeline[]): Promise<MarkerDoc[]> {
  return collection(core.db, markers)
    .find({ accountId, timeline: { $in: [...timelines] } })
    .toArray();
}

/** Saves the position (a new version); two first saves at once: the loser gets Mastodon's 409. */
export async function saveMarker(
  core: Core,
  accountId: Id,
  timeline: MarkerTimeline,
  lastReadId: string,
): Promise<MarkerDoc> {
  const coll = collection(core.db, markers);
  const now = new Date();
  const saved = await coll.findOneAndUpdate(
    { accountId, timeline },
    { $set: { lastReadId, updatedAt: now }, $inc: { version: 1 } },
    { returnDocument: 'after' },
  );
  if (saved) return saved;
  const doc: MarkerDoc = {
    _id: await nextSerialId(core.db, 'markers'),
    accountId,
    timeline,
    lastReadId,
    version: 0,
    updatedAt: now,
  };
  try {
    await coll.insertOne(doc);
  } catch (err) {
    if (isDuplicateKeyError(err)) throw conflict('Conflict during update, please try again');
    throw err;
  }
  return doc;
}
