// Many remote Announces at once (the ingress batch's, one per actor): `onAnnounce` + `insertReblog`
// for a set, with the same checks (the Announce id on the actor's host, a known original that is
// not a reblog, others' followers-only and direct posts refused, wanted when the original is ours
// or the actor has followers here) and the same documents and events, in a fixed number of round
// trips. An original we do not have (to fetch, or embedded) is handed back for the one-by-one path.
import type { Core } from '../../context.ts';
import { collection, insertNew } from '../../db/mongo.ts';
import { countOnce } from '../../db/countOnce.ts';
import { authorStatusCountChanges, incrementCounts, tally } from '../../statuses/statusCounts.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, reblogUniqueKey, type StatusDoc } from '../../model/statuses.ts';
import { follows } from '../../model/follows.ts';
import { reblogDoc } from '../../interactions/reblogs.ts';
import { dropViewerFlags } from '../../interactions/viewerFlags.ts';
import { reblogCreatedEvent } from '../../statuses/events.ts';
import { idOf, str, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import { statusesByUri } from './bulkStatuses.ts';
import { freeStatusIds, visibilityOf } from './statuses.ts';

export interface RemoteAnnounce {
  actor: AccountDoc;
  activity: JsonObject;
}

/** Stores the reblogs of `items` that are new and allowed; returns the indexes for the one-by-one path. */
export async function reblogRemoteAnnounces(core: Core, items: RemoteAnnounce[]): Promise<number[]> {
  const single: number[] = [];
  const coll = collection(core.db, statuses);
  const idOfItem = (i: number) => str(items[i]!.activity.id, 2048);
  const objectOf = (i: number) => idOf(items[i]!.activity.object);
  let todo = items
    .map((_, i) => i)
    .filter((i) => {
      const id = idOfItem(i);
      return id !== null && hostOf(id) === hostOf(items[i]!.actor.uri) && objectOf(i) !== null;
    });
  if (todo.length === 0) return single;
  const [known, originals] = await Promise.all([
    coll.find({ uri: { $in: todo.map((i) => idOfItem(i)!) } }, { projection: { uri: 1 } }).toArray(),
    statusesByUri(
      core,
      todo.map((i) => objectOf(i)!),
    ),
  ]);
  const knownUris = new Set(known.map((s) => s.uri));
  todo = todo.filter((i) => {
    if (knownUris.has(idOfItem(i)!)) return false;
    if (!originals.has(objectOf(i)!)) {
      single.push(i); // embedded or to be fetched
      return false;
    }
    const original = originals.get(objectOf(i)!)!;
    const actor = items[i]!.actor;
    if (original.reblogOfId !== null) return false;
    // Others' followers-only or direct posts cannot be boosted.
    return original.accountId === actor._id || original.visibility === 'public' || original.visibility === 'unlisted';
  });
  // Wanted: the original is ours, or someone here follows the booster.
  const remoteOriginals = todo.filter((i) => !originals.get(objectOf(i)!)!.local).map((i) => items[i]!.actor._id);
  const followed = new Set(
    remoteOriginals.length > 0
      ? (
          await Promise.all(
            [...new Set(remoteOriginals)].map(async (id) =>
              (await collection(core.db, follows).countDocuments({ targetAccountId: id }, { limit: 1 })) > 0
                ? [id]
                : [],
            ),
          )
        ).flat()
      : [],
  );
  todo = todo.filter((i) => originals.get(objectOf(i)!)!.local || followed.has(items[i]!.actor._id));
  // One live reblog per booster and original.
  const keyOf = (i: number) => reblogUniqueKey(items[i]!.actor._id, originals.get(objectOf(i)!)!._id);
  const taken = new Set(
    todo.length > 0
      ? (await coll.find({ uniqueKey: { $in: todo.map(keyOf) } }, { projection: { uniqueKey: 1 } }).toArray()).map(
          (s) => s.uniqueKey,
        )
      : [],
  );
  todo = todo.filter((i) => !taken.has(keyOf(i)));
  if (todo.length === 0) return single;

  const now = Date.now();
  const createdAts = todo.map((i) => {
    const p = items[i]!.activity.published;
    const published = typeof p === 'string' ? new Date(p) : new Date(now);
    return Number.isNaN(published.getTime()) || published.getTime() > now ? new Date(now) : published;
  });
  const ids = await freeStatusIds(core, createdAts);
  const docs: StatusDoc[] = todo.map((i, k) => {
    const { actor, activity } = items[i]!;
    const visibility = visibilityOf(activity, null, actor.followersUrl);
    return reblogDoc({
      id: ids[k]!,
      account: actor,
      original: originals.get(objectOf(i)!)!,
      uri: idOfItem(i)!,
      visibility: visibility === 'direct' ? 'private' : visibility,
      createdAt: createdAts[k]!,
    });
  });
  await core.outbox.write(docs.map(reblogCreatedEvent), async () => {
    // A concurrent consumer may have won some (a rebalance): count only ours.
    const inserted = await insertNew(coll, docs);
    await Promise.all([
      incrementCounts(coll, 'reblogsCount', tally(inserted.map((r) => r.reblogOfId!))),
      countOnce(collection(core.db, accounts), authorStatusCountChanges(inserted)),
    ]);
  });
  await Promise.all([...new Set(docs.map((d) => d.accountId))].map((id) => dropViewerFlags(core, id)));
  return single;
}
