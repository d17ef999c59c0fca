// Collection notifications (Mastodon 4.6): `added_to_collection` to a local account featured in a
// collection (from its curator), `collection_update` to the local accounts a changed collection
// features. Remote collections' changes are notified where they arrive (featuredCollections/ingress.ts).
import type { Core } from '../../services/core/context.ts';
import type { NotificationRequest } from '../../services/core/notifications/notify.ts';
import type { EventPayload } from '../../schemas/index.ts';
import { collectionNotifications } from '../../services/core/featuredCollections/notifications.ts';

type Notify = (core: Core, requests: NotificationRequest[]) => Promise<unknown>;

export async function handleCollectionChanged(
  core: Core,
  p: EventPayload<'CollectionChanged'>,
  eventId: string,
  notify: Notify,
): Promise<void> {
  const requests = await collectionNotifications(core, {
    change: p.change,
    curatorId: BigInt(p.accountId),
    collectionId: BigInt(p.collectionId),
    itemId: p.itemId == null ? null : BigInt(p.itemId),
    variant: eventId,
  });
  if (requests.length > 0) await notify(core, requests);
}
