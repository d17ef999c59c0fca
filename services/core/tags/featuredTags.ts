// Featuring hashtags on one's profile: at most 10; with how many statuses use each and when last.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { featuredTags, type FeaturedTagDoc } from '../model/featuredTags.ts';
import { recordedAmong } from '../model/accountRecord.ts';
import type { Filter } from 'mongodb';
import { statuses, type StatusDoc, type Visibility } from '../model/statuses.ts';
import { findOrCreateTag } from '../statuses/entities.ts';
import { notFound, validationFailed } from '../errors.ts';
import { LIMITS } from '../instance/limits.ts';
import type { NewEvent } from '../events/outbox.ts';

function featuredTagEvent(
  type: 'FeaturedTagCreated' | 'FeaturedTagDeleted',
  doc: FeaturedTagDoc,
): NewEvent<'FeaturedTagCreated' | 'FeaturedTagDeleted'> {
  return {
    type,
    key: String(doc.accountId),
    payload: {
      featuredTagId: String(doc._id),
      accountId: String(doc.accountId),
      tagId: String(doc.tagId),
      name: doc.nameNormalized,
    },
    verify: {
      collection: featuredTags.name,
      filter: { _id: doc._id },
      expect: type === 'FeaturedTagCreated' ? 'exists' : 'absent',
    },
  };
}

export const FEATURED_TAGS_LIMIT = LIMITS.accounts.maxFeaturedTags;

export async function featureTag(core: Core, account: AccountDoc, name: string): Promise<FeaturedTagDoc> {
  const clean = name.trim().replace(/^#/, '');
  if (!clean || !/^[\p{L}\p{M}\p{N}_·\u200c]+$/u.test(clean) || /^\d+$/.test(clean))
    throw validationFailed('Tag is invalid');
  const tag = await findOrCreateTag(core, clean);
  const coll = collection(core.db, featuredTags);
  const existing = await coll.findOne({ accountId: account._id, tagId: tag._id });
  if (existing) return existing;
  if ((await coll.countDocuments({ accountId: account._id })) >= FEATURED_TAGS_LIMIT)
    throw validationFailed(`You can only feature up to ${FEATURED_TAGS_LIMIT} hashtags`);
  const doc: FeaturedTagDoc = {
    _id: await nextSerialId(core.db, 'featured_tags'),
    accountId: account._id,
    tagId: tag._id,
    name: tag.name,
    nameNormalized: tag.nameNormalized,
    createdAt: new Date(),
  };
  try {
    await core.outbox.write([featuredTagEvent('FeaturedTagCreated', doc)], () => coll.insertOne(doc));
    return doc;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return (await coll.findOne({ accountId: account._id, tagId: tag._id })) ?? doc;
  }
}

/** The account's featured hashtags, oldest first (the order of its profile). */
export async function ownFeaturedTags(core: Core, accountId: Id): Promise<FeaturedTagDoc[]> {
  return collection(core.db, featuredTags).find({ accountId }).sort({ _id: 1 }).toArray();
}

export async function unfeatureTag(core: Core, account: AccountDoc, id: Id | null): Promise<void> {
  const coll = collection(core.db, featuredTags);
  const doc = id === null ? null : await coll.findOne({ _id: id, accountId: account._id });
  if (!doc) throw notFound();
  await core.outbox.write([featuredTagEvent('FeaturedTagDeleted', doc)], () => coll.deleteOne({ _id: doc._id }));
}

/** POST /api/v1/tags/:id/unfeature: stops featuring the tag, if it was featured. */
export async function unfeatureTagNamed(core: Core, account: AccountDoc, tagId: Id): Promise<void> {
  const coll = collection(core.db, featuredTags);
  const doc = await coll.findOne({ accountId: account._id, tagId });
  if (!doc) return;
  await core.outbox.write([featuredTagEvent('FeaturedTagDeleted', doc)], () => coll.deleteOne({ _id: doc._id }));
}

/** Whether the account features the tag on its profile (the Tag entity's `featuring`). */
export async function featuresTag(core: Core, accountId: Id, tag: { _id: Id }): Promise<boolean> {
  return (await featuredAmong(core, accountId, [tag._id])).has(tag._id);
}

/** Which of the tags the account features (the `featuring` of a page of Tag entities). */
export async function featuredAmong(core: Core, accountId: Id, tagIds: Id[]): Promise<Set<Id>> {
  return recordedAmong(core.db, featuredTags, accountId, 'tagId', tagIds);
}

export interface FeaturedTagUsage {
  statusesCount: number;
  lastStatusAt: Date | null;
}

/** Public statuses of the account with the tag: how many, and the newest one's date. */
export async function featuredTagUsage(core: Core, accountId: Id, nameNormalized: string): Promise<FeaturedTagUsage> {
  const visible: Visibility[] = ['public', 'unlisted'];
  const filter: Filter<StatusDoc> = {
    accountId,
    tagNames: nameNormalized,
    deletedAt: null,
    visibility: { $in: visible },
  };
  const [count, newest] = await Promise.all([
    collection(core.db, statuses).countDocuments(filter),
    collection(core.db, statuses).find(filter).sort({ _id: -1 }).limit(1).toArray(),
  ]);
  return { statusesCount: count, lastStatusAt: newest[0]?.createdAt ?? null };
}

/** The account's most used hashtags of its recent statuses that it does not feature yet. */
export async function featuredTagSuggestions(core: Core, account: AccountDoc, limit = 10): Promise<string[]> {
  const recent = await collection(core.db, statuses)
    .find({ accountId: account._id, deletedAt: null }, { projection: { tagNames: 1 } })
    .sort({ _id: -1 })
    .limit(1000)
    .toArray();
  const featured = new Set(
    (await collection(core.db, featuredTags).find({ accountId: account._id }).toArray()).map((f) => f.nameNormalized),
  );
  const counts = new Map<string, number>();
  for (const s of recent) for (const t of s.tagNames) if (!featured.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([t]) => t);
}
