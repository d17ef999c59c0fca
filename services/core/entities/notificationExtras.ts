// What a notification carries beside its account and status: the `report` of `admin.report`, the
// `moderation_warning` of `moderation_warning`, and (Mastodon 4.6) the `collection` of
// `added_to_collection` and `collection_update`. A notification whose record is gone is not shown.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import type { CachedAccount } from '../model/accounts.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { featuredCollections } from '../model/featuredCollections.ts';
import { notificationModerationRefs } from './admin.ts';
import { presentCollections } from './collection.ts';

/** Each notification's extra attributes, by id; a notification that needs a record and lacks it is absent. */
export async function notificationExtras(
  core: Core,
  docs: NotificationDoc[],
  viewer: CachedAccount,
): Promise<Map<bigint, Record<string, unknown>>> {
  const out = new Map<bigint, Record<string, unknown>>();
  const moderation = await notificationModerationRefs(core, docs);
  const collectionIds = [...new Set(docs.map((d) => d.collectionId).filter((c) => c != null))];
  const docsById = new Map(
    (await findInOrder(collection(core.db, featuredCollections), collectionIds)).map((c) => [c._id, c]),
  );
  const { collections } = await presentCollections(core, [...docsById.values()], viewer);
  const rendered = new Map(collections.map((c) => [BigInt(c.id), c]));
  for (const d of docs) {
    if (d.reportId != null || d.warningId != null) {
      const refs = moderation.get(d._id);
      if (refs) out.set(d._id, refs);
    } else if (d.collectionId != null) {
      const c = rendered.get(d.collectionId);
      if (c) out.set(d._id, { collection: c });
    } else out.set(d._id, {});
  }
  return out;
}
