// Many remote Undos of Likes and Announces at once (the ingress batch's, one per actor):
// `unfavouriteStatus` and `removeReblog` for a set, with the same lookups (the actor's own
// favourite of a local status; its reblog by the Announce's id, or by the original when the
// Announce has no id) and the same
// events and counters. The reads are batched; each removal is its own conditional write (so a
// counter moves only for a document this call removed), and the counters move in one bulk write.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { countOnce } from '../../db/countOnce.ts';
import { incrementCounts, tally } from '../../statuses/statusCounts.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, reblogUniqueKey, type StatusDoc } from '../../model/statuses.ts';
import { favourites, type FavouriteDoc } from '../../model/favourites.ts';
import { favouriteEvent } from '../../interactions/favourites.ts';
import { dropViewerFlags } from '../../interactions/viewerFlags.ts';
import { reblogDeletedEvent } from '../../statuses/events.ts';
import { firstType, idOf, obj, type JsonObject } from '../json.ts';
import { statusesByUri } from './bulkStatuses.ts';

export interface RemoteUndo {
  actor: AccountDoc;
  activity: JsonObject;
}

/** The kind of an Undo the bulk path takes: of a Like or an Announce, embedded, by this actor. */
export function bulkUndoKind(actor: AccountDoc, activity: JsonObject): 'Like' | 'Announce' | null {
  const inner = obj(activity.object);
  if (!inner) return null;
  const innerActor = idOf(inner.actor);
  if (innerActor !== null && innerActor !== actor.uri) return null;
  const type = firstType(inner);
  return type === 'Like' || type === 'Announce' ? type : null;
}

export async function undoRemoteLikes(core: Core, items: RemoteUndo[]): Promise<void> {
  const objectOf = (u: RemoteUndo) => idOf(obj(u.activity.object)?.object) ?? '';
  const found = await statusesByUri(core, items.map(objectOf));
  const pairs = items
    .map((u) => ({ actor: u.actor, status: found.get(objectOf(u)) }))
    .filter((p): p is { actor: AccountDoc; status: StatusDoc } => p.status?.local === true);
  if (pairs.length === 0) return;
  const favs = await collection(core.db, favourites)
    .find({
      accountId: { $in: [...new Set(pairs.map((p) => p.actor._id))] },
      statusId: { $in: [...new Set(pairs.map((p) => p.status._id))] },
    })
    .toArray();
  const todo = pairs
    .map((p) => ({ ...p, fav: favs.find((f) => f.accountId === p.actor._id && f.statusId === p.status._id) }))
    .filter((p): p is { actor: AccountDoc; status: StatusDoc; fav: FavouriteDoc } => p.fav !== undefined);
  if (todo.length === 0) return;
  await core.outbox.write(
    todo.map((p) => favouriteEvent('FavouriteDeleted', p.fav, p.status)),
    async () => {
      const removed = await Promise.all(
        todo.map(async (p) => (await collection(core.db, favourites).deleteOne({ _id: p.fav._id })).deletedCount > 0),
      );
      const unliked = todo.filter((_, k) => removed[k]).map((p) => p.status._id);
      await incrementCounts(collection(core.db, statuses), 'favouritesCount', tally(unliked), -1);
    },
  );
  await Promise.all([...new Set(todo.map((p) => p.actor._id))].map((id) => dropViewerFlags(core, id)));
}

export async function undoRemoteAnnounces(core: Core, items: RemoteUndo[]): Promise<void> {
  const coll = collection(core.db, statuses);
  const innerOf = (u: RemoteUndo) => obj(u.activity.object)!;
  const byId = items.filter((u) => typeof innerOf(u).id === 'string');
  const byUri = new Map<string, StatusDoc>();
  if (byId.length > 0)
    for (const s of await coll
      .find({ uri: { $in: byId.map((u) => innerOf(u).id as string) }, deletedAt: null })
      .toArray())
      byUri.set(s.uri, s);
  const reblogOf = new Map<RemoteUndo, StatusDoc>();
  const rest: RemoteUndo[] = [];
  for (const u of items) {
    // By the Announce's id when it has one (as Mastodon): a redelivered Undo must not take a later
    // boost of the same status. Only an Announce without id is found by its original.
    if (typeof innerOf(u).id !== 'string') rest.push(u);
    else {
      const r = byUri.get(innerOf(u).id as string);
      if (r && r.accountId === u.actor._id) reblogOf.set(u, r);
    }
  }
  if (rest.length > 0) {
    // Not found by the Announce's id: the actor's reblog of the original.
    const originals = await statusesByUri(
      core,
      rest.map((u) => idOf(innerOf(u).object) ?? ''),
    );
    const keys = new Map<string, RemoteUndo>();
    for (const u of rest) {
      const original = originals.get(idOf(innerOf(u).object) ?? '');
      if (original) keys.set(reblogUniqueKey(u.actor._id, original._id), u);
    }
    if (keys.size > 0)
      for (const s of await coll.find({ uniqueKey: { $in: [...keys.keys()] } }).toArray()) {
        const u = keys.get(s.uniqueKey);
        if (u) reblogOf.set(u, s);
      }
  }
  const todo = [...reblogOf.values()].filter((r) => r.reblogOfId !== null && r.deletedAt === null);
  if (todo.length === 0) return;
  const deletedAt = new Date();
  await core.outbox.write(todo.map(reblogDeletedEvent), async () => {
    const removed = await Promise.all(
      todo.map(
        async (r) =>
          (
            await coll.updateOne(
              { _id: r._id, deletedAt: null },
              { $set: { deletedAt, updatedAt: deletedAt, uniqueKey: `d:${r._id}` } },
            )
          ).modifiedCount > 0,
      ),
    );
    const gone = todo.filter((_, k) => removed[k]);
    await Promise.all([
      incrementCounts(coll, 'reblogsCount', tally(gone.map((r) => r.reblogOfId!)), -1),
      // Marked as removeReblog marks it, so that a retry through a MongoDB restart counts once.
      countOnce(
        collection(core.db, accounts),
        gone
          .filter((r) => r.visibility !== 'direct')
          .map((r) => ({ _id: r.accountId, inc: { statusesCount: -1 }, mark: `s-${r._id}` })),
      ),
    ]);
  });
  await Promise.all([...new Set(todo.map((r) => r.accountId))].map((id) => dropViewerFlags(core, id)));
}
