// A collection of featured accounts changed (Mastodon 4.6): Add/Update/Remove of a local
// collection and Add/Remove of its items go to the curator's followers; a local account leaving a
// remote collection sends the Delete of its FeatureAuthorization to the curator's server and the
// local account's followers (Mastodon's DeleteFeatureAuthorizationSerializer).
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts } from '../../model/accounts.ts';
import { collectionItems, featuredCollections } from '../../model/featuredCollections.ts';
import type { EventRecord } from '../../../../schemas/index.ts';
import {
  renderAddItem,
  renderCollectionActivity,
  renderDeleteFeatureAuthorization,
  renderRemoveCollection,
  renderRemoveItem,
} from '../../featuredCollections/federation.ts';
import { collectionUriOf } from '../../featuredCollections/documents.ts';
import { followerInboxes, inboxesOf } from './audience.ts';
import { big, localAccount, plan, type DeliveryPlan } from './planHelpers.ts';

export async function planCollection(core: Core, p: EventRecord<'CollectionChanged'>): Promise<DeliveryPlan[]> {
  const collectionId = big(p.collectionId);
  const itemId = p.itemId === null ? null : big(p.itemId);
  if (p.change === 'item_revoked') return planRevocation(core, p);
  if (!p.local) return [];
  const curator = await localAccount(core, p.accountId);
  if (!curator) return [];
  const id = `${curator.uri}#collections/${p.eventId}`;
  const toFollowers = async (activity: Record<string, unknown>) => [
    plan(id, activity, curator, await followerInboxes(core, curator._id)),
  ];
  if (p.change === 'deleted') return toFollowers(renderRemoveCollection(core, curator, collectionId));
  if (p.change === 'item_removed' && itemId !== null)
    return toFollowers(renderRemoveItem(core, curator, collectionId, itemId));
  const doc = await collection(core.db, featuredCollections).findOne({ _id: collectionId });
  if (!doc) return [];
  if (p.change === 'created' || p.change === 'updated')
    return toFollowers(await renderCollectionActivity(core, p.change === 'created' ? 'Add' : 'Update', doc, curator));
  if (p.change !== 'item_added' || itemId === null) return [];
  const item = await collection(core.db, collectionItems).findOne({ _id: itemId, state: 'accepted' });
  const featured = item ? await collection(core.db, accounts).findOne({ _id: item.accountId }) : null;
  if (!item || !featured) return [];
  return toFollowers(renderAddItem(core, doc, curator, item, featured));
}

/** A local featured account took itself out of a collection: its stamp is deleted. */
async function planRevocation(core: Core, p: EventRecord<'CollectionChanged'>): Promise<DeliveryPlan[]> {
  if (p.itemAccountId === null || p.itemId === null) return [];
  const featured = await localAccount(core, p.itemAccountId);
  const doc = await collection(core.db, featuredCollections).findOne({ _id: big(p.collectionId) });
  if (!featured || !doc) return [];
  const inboxes = await followerInboxes(core, featured._id);
  // A remote curator's server is told directly; a local collection's followers learn it from the
  // Remove of the item its curator's server sends.
  if (!p.local) await inboxesOf(core, [doc.accountId], inboxes);
  const activity = renderDeleteFeatureAuthorization(core, featured, big(p.itemId), collectionUriOf(core, doc));
  const plans = [plan(String(activity.id), activity, featured, inboxes)];
  if (p.local) {
    const curator = await localAccount(core, p.accountId);
    if (curator)
      plans.push(
        plan(
          `${curator.uri}#collections/${p.eventId}`,
          renderRemoveItem(core, curator, doc._id, big(p.itemId)),
          curator,
          await followerInboxes(core, curator._id),
        ),
      );
  }
  return plans;
}
