// Tags with their 7-day history, rendered in one Redis round trip for a whole list.
import type { Core } from '../context.ts';
import type { TagDoc } from '../model/tags.ts';
import { histories } from '../trends/counters.ts';
import { presentHistory } from './previewCard.ts';
import { presentTag, type Tag } from './tag.ts';

export async function presentTagsWithHistory(
  core: Core,
  list: readonly TagDoc[],
  viewer?: (tag: TagDoc) => { following: boolean; featuring: boolean } | undefined,
): Promise<Tag[]> {
  const hist = await histories(
    core.redis,
    'tag',
    list.map((t) => t.nameNormalized),
  );
  return list.map((t) => presentTag(core.config, t, viewer?.(t), presentHistory(hist.get(t.nameNormalized) ?? [])));
}
