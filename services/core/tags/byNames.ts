// Tags looked up by their normalized names: for posts' hashtags, tag followers, and lists ranked or
// suggested by name. A tag document never changes once made (and is never removed), so each
// process keeps the ones it found for a while: a post's hashtags then cost no MongoDB read.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { tags, type TagDoc } from '../model/tags.ts';
import { TtlCache, cachePerOwner } from '../cache/ttlCache.ts';

const found = cachePerOwner(() => new TtlCache<string, TagDoc>(60 * 60_000, 10_000));

/** The tags named `names` (normalized), in that order; names without a tag left out. */
export async function tagsByNames(core: Core, names: readonly string[]): Promise<TagDoc[]> {
  const kept = found(core.db);
  const missing = [...new Set(names.filter((n) => kept.get(n) === undefined))];
  if (missing.length > 0) {
    const docs = await collection(core.db, tags)
      .find({ nameNormalized: { $in: missing } })
      .toArray();
    for (const d of docs) kept.set(d.nameNormalized, d);
  }
  return names.map((n) => kept.get(n)).filter((t): t is TagDoc => t !== undefined);
}
