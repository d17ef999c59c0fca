// Who a collection change notifies (Mastodon 4.6): `added_to_collection` goes to a local account
// whose place in a collection was accepted, `collection_update` to the local accounts an updated
// collection features; never to the curator itself.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { collectionItems } from '../model/featuredCollections.ts';
import type { NotificationRequest } from '../notifications/notify.ts';

export interface CollectionChangeFacts {
  change: string;
  curatorId: Id;
  collectionId: Id;
  itemId: Id | null;
  /** Tells repeated updates of one collection apart (the event's id). */
  variant: string;
}

export async function collectionNotifications(core: Core, c: CollectionChangeFacts): Promise<NotificationRequest[]> {
  if (c.change === 'item_added' && c.itemId !== null) {
    const item = await collection(core.db, collectionItems).findOne({ _id: c.itemId, state: 'accepted' });
    if (!item || item.accountId === c.curatorId || !(await isLocal(core, [item.accountId])).length) return [];
    return [
      {
        type: 'added_to_collection',
        accountId: item.accountId,
        fromAccountId: c.curatorId,
        collectionId: c.collectionId,
      },
    ];
  }
  if (c.change !== 'updated') return [];
  const featured = await collection(core.db, collectionItems)
    .find({ collectionId: c.collectionId, state: 'accepted' }, { projection: { accountId: 1 } })
    .toArray();
  const local = await isLocal(
    core,
    featured.map((i) => i.accountId).filter((a) => a !== c.curatorId),
  );
  return local.map((accountId) => ({
    type: 'collection_update' as const,
    accountId,
    fromAccountId: c.curatorId,
    collectionId: c.collectionId,
    variant: c.variant,
  }));
}

async function isLocal(core: Core, ids: Id[]): Promise<Id[]> {
  if (ids.length === 0) return [];
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids }, domain: null }, { projection: { _id: 1 } })
    .toArray();
  return found.map((a) => a._id);
}
