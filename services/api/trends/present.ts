// Rendering ranked trend items: hashtags (Tag with history), statuses and links (Trends::Link).
import type { Core } from '../../core/context.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import type { StatusDoc } from '../../core/model/statuses.ts';
import { findLiveStatuses } from '../../core/statuses/reads.ts';
import type { TagDoc } from '../../core/model/tags.ts';
import { tagsByNames } from '../../core/tags/byNames.ts';
import type { RankedItem } from '../../core/trends/queries.ts';
import { histories } from '../../core/trends/counters.ts';
import { cardsById } from '../../core/previews/cards.ts';
import { withoutLimitedAuthors } from '../../core/moderation/limited.ts';
import { filterVisible } from '../../core/statuses/visibility.ts';
import { blockedAmong } from '../../core/graph/relations.ts';
import { presentTagsWithHistory } from '../../core/entities/tagHistory.ts';
import { type Status } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { presentHistory, presentPreviewCard, type TrendsLink } from '../../core/entities/previewCard.ts';
import type { Tag } from '../../core/entities/tag.ts';

export function tagsOf(core: Core, items: readonly RankedItem[]): Promise<TagDoc[]> {
  return tagsByNames(
    core,
    items.map((i) => i.item),
  );
}

export async function presentTrendingTags(core: Core, items: readonly RankedItem[]): Promise<Tag[]> {
  return presentTagsWithHistory(core, await tagsOf(core, items));
}

export async function statusesOf(core: Core, items: readonly RankedItem[]): Promise<StatusDoc[]> {
  return findLiveStatuses(
    core,
    items.map((i) => BigInt(i.item)),
  );
}

export async function presentTrendingStatuses(
  core: Core,
  items: readonly RankedItem[],
  viewer: CachedAccount | null,
): Promise<Status[]> {
  let docs = await filterVisible(core, viewer, await statusesOf(core, items));
  if (viewer) {
    // Mastodon's filtered_for: nothing by accounts the viewer blocks.
    const blocked = await blockedAmong(
      core,
      viewer._id,
      docs.map((d) => d.accountId),
    );
    docs = docs.filter((d) => !blocked.has(d.accountId));
  }
  // Silenced authors do not trend for those who do not follow them.
  docs = await withoutLimitedAuthors(core, viewer, docs);
  return presentStatuses(core, docs, viewer);
}

export async function presentTrendingLinks(core: Core, items: readonly RankedItem[]): Promise<TrendsLink[]> {
  const cards = await cardsById(
    core,
    items.map((i) => BigInt(i.item)),
  );
  const hist = await histories(
    core.redis,
    'link',
    items.map((i) => i.item),
  );
  return items.flatMap((i) => {
    const card = cards.get(BigInt(i.item));
    return card ? [{ ...presentPreviewCard(card), history: presentHistory(hist.get(i.item) ?? []) }] : [];
  });
}
