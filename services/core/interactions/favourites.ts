// Favourites and bookmarks. Favouriting needs Mastodon's `favourite?` policy; undoing works even
// when the caller lost access to the status (the record is theirs).
import { dropViewerFlags } from './viewerFlags.ts';
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce, isDuplicateKeyError } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { favourites, type FavouriteDoc } from '../model/favourites.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { recordedAmong } from '../model/accountRecord.ts';
import { canFavourite } from '../statuses/visibility.ts';
import { statusForbidden } from '../statuses/errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { indexForAccount } from '../search/indexer.ts';

export function favouriteEvent(
  type: 'FavouriteCreated' | 'FavouriteDeleted',
  fav: FavouriteDoc,
  status: StatusDoc,
): NewEvent {
  const base = {
    favouriteId: String(fav._id),
    accountId: String(fav.accountId),
    statusId: String(status._id),
    statusAccountId: String(status.accountId),
  };
  return type === 'FavouriteCreated'
    ? {
        type,
        key: String(fav.accountId),
        payload: { ...base, createdAt: fav.createdAt },
        verify: { collection: 'favourites', filter: { _id: fav._id }, expect: 'exists' },
      }
    : {
        type,
        key: String(fav.accountId),
        payload: base,
        verify: { collection: 'favourites', filter: { _id: fav._id }, expect: 'absent' },
      };
}

/** Favourites a visible status (idempotent). The caller has checked visibility (404 otherwise). */
export async function favouriteStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  if (!(await canFavourite(core, account, status))) throw statusForbidden();
  const coll = collection(core.db, favourites);
  if (await coll.findOne({ accountId: account._id, statusId: status._id })) return;
  const fav: FavouriteDoc = {
    _id: await nextSerialId(core.db, 'favourites'),
    accountId: account._id,
    statusId: status._id,
    createdAt: new Date(),
  };
  await core.outbox.write([favouriteEvent('FavouriteCreated', fav, status)], async () => {
    try {
      await coll.insertOne(fav);
    } catch (err) {
      if (isDuplicateKeyError(err)) return; // a concurrent request won; its event stands, ours is dropped by the relay check
      throw err;
    }
    await collection(core.db, statuses).updateOne({ _id: status._id }, { $inc: { favouritesCount: 1 } });
  });
  await dropViewerFlags(core, account._id);
}

export async function unfavouriteStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  const coll = collection(core.db, favourites);
  const fav = await coll.findOne({ accountId: account._id, statusId: status._id });
  if (!fav) return;
  await core.outbox.write([favouriteEvent('FavouriteDeleted', fav, status)], async () => {
    const res = await coll.deleteOne({ _id: fav._id });
    if (res.deletedCount > 0)
      await collection(core.db, statuses).updateOne({ _id: status._id }, { $inc: { favouritesCount: -1 } });
  });
  await dropViewerFlags(core, account._id);
}

export async function hasFavourited(core: Core, account: AccountDoc, status: StatusDoc): Promise<boolean> {
  return (await recordedAmong(core.db, favourites, account._id, 'statusId', [status._id])).has(status._id);
}

/**
 * Bookmarks are private: no event. The status becomes searchable for the bookmarker right here
 * (a few Redis writes); `rebuildStatusIndex` covers a failure.
 */
export async function bookmarkStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  await insertOnce(collection(core.db, bookmarks), {
    _id: await nextSerialId(core.db, 'bookmarks'),
    accountId: account._id,
    statusId: status._id,
    createdAt: new Date(),
  });
  await dropViewerFlags(core, account._id);
  await indexForAccount(core, account._id, status._id).catch((err: unknown) =>
    core.logger.warn({ err, statusId: String(status._id) }, 'search index: bookmark not indexed'),
  );
}

export async function unbookmarkStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  await collection(core.db, bookmarks).deleteOne({ accountId: account._id, statusId: status._id });
  await dropViewerFlags(core, account._id);
}

export async function hasBookmarked(core: Core, account: AccountDoc, status: StatusDoc): Promise<boolean> {
  return (await recordedAmong(core.db, bookmarks, account._id, 'statusId', [status._id])).has(status._id);
}
