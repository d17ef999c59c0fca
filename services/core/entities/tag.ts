// Tag entity (mastodon-api-entities.md §9); `history` (uses and accounts per day, 7 days) comes
// from the trends counters where the caller loaded it (core/trends/counters.ts `histories`).
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import type { TagDoc } from '../model/tags.ts';
import { tagUrl } from '../statuses/urls.ts';

export const TagHistoryEntity = Type.Object({ day: Type.String(), uses: Type.String(), accounts: Type.String() });

export const TagEntity = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  history: Type.Array(TagHistoryEntity),
  following: Type.Optional(Type.Boolean()),
  featuring: Type.Optional(Type.Boolean()),
});
export type Tag = Static<typeof TagEntity>;

export function presentTag(
  config: Config,
  tag: TagDoc,
  viewer?: { following: boolean; featuring: boolean },
  history: Tag['history'] = [],
): Tag {
  const out: Tag = { id: String(tag._id), name: tag.name, url: tagUrl(config, tag.name), history };
  if (viewer) {
    out.following = viewer.following;
    out.featuring = viewer.featuring;
  }
  return out;
}
