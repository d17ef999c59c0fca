// Many remote Likes at once (the ingress batch's Likes, one per actor): `favouriteStatus` for a set,
// with the same checks (a local status that is not a reblog, Mastodon's `favourite?` policy) and
// the same documents and events, in a fixed number of round trips: the statuses, the existing
// favourites, a block of ids, one outbox write with one insertMany, one bulk write of the counts.
import type { Core } from '../../context.ts';
import { nextSerialIds } from '../../ids.ts';
import { collection, insertNew } from '../../db/mongo.ts';
import { incrementCounts, tally } from '../../statuses/statusCounts.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { favourites, type FavouriteDoc } from '../../model/favourites.ts';
import { canFavouriteEach } from '../../statuses/visibility.ts';
import { favouriteEvent } from '../../interactions/favourites.ts';
import { dropViewerFlags } from '../../interactions/viewerFlags.ts';
import { statusesByUri } from './bulkStatuses.ts';

export interface RemoteLike {
  actor: AccountDoc;
  objectUri: string;
}

export async function favouriteRemoteLikes(core: Core, likes: RemoteLike[]): Promise<void> {
  const found = await statusesByUri(
    core,
    likes.map((l) => l.objectUri),
  );
  const candidates = likes
    .map((l) => ({ actor: l.actor, status: found.get(l.objectUri) }))
    .filter((c): c is { actor: AccountDoc; status: StatusDoc } => !!c.status?.local && c.status.reblogOfId === null);
  if (candidates.length === 0) return;
  const allowed = await canFavouriteEach(
    core,
    candidates.map((c) => ({ viewer: c.actor, status: c.status })),
  );
  const coll = collection(core.db, favourites);
  const existing = await coll
    .find(
      {
        accountId: { $in: [...new Set(candidates.map((c) => c.actor._id))] },
        statusId: { $in: [...new Set(candidates.map((c) => c.status._id))] },
      },
      { projection: { accountId: 1, statusId: 1 } },
    )
    .toArray();
  const pair = (a: bigint, s: bigint) => `${a}:${s}`;
  const have = new Set(existing.map((f) => pair(f.accountId, f.statusId)));
  const todo = candidates.filter((c, k) => {
    if (!allowed[k]) {
      core.logger.debug({ actor: c.actor.uri, statusId: String(c.status._id) }, 'ingress: Like refused');
      return false;
    }
    const p = pair(c.actor._id, c.status._id);
    if (have.has(p)) return false;
    have.add(p);
    return true;
  });
  if (todo.length === 0) return;
  const ids = await nextSerialIds(core.db, 'favourites', todo.length);
  const now = new Date();
  const docs: FavouriteDoc[] = todo.map((c, k) => ({
    _id: ids[k]!,
    accountId: c.actor._id,
    statusId: c.status._id,
    createdAt: now,
  }));
  await core.outbox.write(
    docs.map((f, k) => favouriteEvent('FavouriteCreated', f, todo[k]!.status)),
    async () => {
      // A concurrent consumer may have won some (a rebalance): count only ours.
      const inserted = await insertNew(coll, docs);
      await incrementCounts(collection(core.db, statuses), 'favouritesCount', tally(inserted.map((f) => f.statusId)));
    },
  );
  await Promise.all([...new Set(todo.map((c) => c.actor._id))].map((id) => dropViewerFlags(core, id)));
}
