// An account's featured collection changed (federation reference §6.3): a pinned status or a
// featured tag added or removed, as Add/Remove to the followers.
import type { Core } from '../../context.ts';
import type { EventRecord } from '../../../../schemas/index.ts';
import { localBase } from '../uris.ts';
import type { JsonLd } from '../render/context.ts';
import { renderFeaturedTag, renderPin } from '../render/activities.ts';
import { followerInboxes } from './audience.ts';
import { localAccount, plan, type DeliveryPlan } from './planHelpers.ts';

export type FeaturedEvent = 'StatusPinned' | 'StatusUnpinned' | 'FeaturedTagCreated' | 'FeaturedTagDeleted';

export async function planFeatured(
  core: Core,
  type: FeaturedEvent,
  payload: EventRecord<FeaturedEvent>,
): Promise<DeliveryPlan[]> {
  const p = payload as EventRecord<'StatusPinned'> | EventRecord<'FeaturedTagCreated'>;
  const account = await localAccount(core, p.accountId);
  if (!account) return [];
  const kind = type === 'StatusPinned' || type === 'FeaturedTagCreated' ? 'Add' : 'Remove';
  const featured = account.featuredUrl ?? `${account.uri}/collections/featured`;
  const activity: JsonLd =
    'statusUri' in p
      ? renderPin(kind, account.uri, featured, p.statusUri)
      : renderFeaturedTag(core.config, kind, account.uri, featured, {
          name: p.name,
          href: `${localBase(core.config)}/@${account.username}/tagged/${encodeURIComponent(p.name)}`,
        });
  return [
    plan(
      `${account.uri}#${kind.toLowerCase()}/${p.eventId}`,
      activity,
      account,
      await followerInboxes(core, account._id),
    ),
  ];
}
