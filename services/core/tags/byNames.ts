// Tags looked up by their normalized names, for lists ranked or suggested by name.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { tags, type TagDoc } from '../model/tags.ts';

/** The tags named `names` (normalized), in that order; names without a tag left out. */
export async function tagsByNames(core: Core, names: readonly string[]): Promise<TagDoc[]> {
  const docs = await collection(core.db, tags)
    .find({ nameNormalized: { $in: [...names] } })
    .toArray();
  const byName = new Map(docs.map((d) => [d.nameNormalized, d]));
  return names.map((n) => byName.get(n)).filter((t): t is TagDoc => t !== undefined);
}
