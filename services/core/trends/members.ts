// The ranking member a reviewer approves or rejects, from the id the admin API and the dashboard
// name it by: a tag's normalised name, a status id, a preview card id, a publisher's domain.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { parseId, type Id } from '../ids.ts';
import { notFound, orNotFound } from '../errors.ts';
import { tags } from '../model/tags.ts';
import { statuses } from '../model/statuses.ts';
import { previewCardProviders, previewCards, type PreviewCardProviderDoc } from '../model/previewCards.ts';
import type { ReviewKind } from '../model/trends.ts';

/** The publisher (a preview card provider) by its id. */
export function findPublisher(core: Core, id: Id): Promise<PreviewCardProviderDoc | null> {
  return collection(core.db, previewCardProviders).findOne({ _id: id });
}

/** The member behind `raw` (an id); 404 when there is none. */
export async function trendMember(core: Core, kind: ReviewKind, raw: string): Promise<string> {
  const id = parseId(raw);
  if (id === null) throw notFound();
  if (kind === 'tag') {
    const tag = await collection(core.db, tags).findOne({ _id: id });
    if (!tag) throw notFound();
    return tag.nameNormalized;
  }
  if (kind === 'status') {
    const st = await collection(core.db, statuses).findOne({ _id: id, deletedAt: null });
    if (!st) throw notFound();
    return String(id);
  }
  if (kind === 'publisher') {
    const provider = await findPublisher(core, id);
    if (!provider) throw notFound();
    return provider.domain;
  }
  orNotFound(await collection(core.db, previewCards).findOne({ _id: id }));
  return String(id);
}
