// A filter's keywords and status entries one by one (/api/v2/filters/:id/keywords, /statuses and
// their single resources), and the deprecated v1 filters (one filter per keyword). Each change
// publishes one `filters_changed`.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { notFound, validationFailed } from '../errors.ts';
import {
  filterKeywords,
  filterStatuses,
  filters,
  type FilterContext,
  type FilterDoc,
  type FilterKeywordDoc,
  type FilterStatusDoc,
} from '../model/filters.ts';
import { findLiveStatus } from '../statuses/reads.ts';
import { publishFiltersChanged } from './changes.ts';
import { addFilterKeyword, createFilter } from './filters.ts';

export async function ownKeyword(core: Core, accountId: Id, id: Id | null): Promise<FilterKeywordDoc> {
  const k = id === null ? null : await collection(core.db, filterKeywords).findOne({ _id: id, accountId });
  if (!k) throw notFound();
  return k;
}

export function keywordsOf(core: Core, f: FilterDoc): Promise<FilterKeywordDoc[]> {
  return collection(core.db, filterKeywords).find({ filterId: f._id }).sort({ _id: 1 }).toArray();
}

export async function addKeyword(core: Core, f: FilterDoc, keyword: string, wholeWord: boolean) {
  const k = await addFilterKeyword(core, f, keyword, wholeWord);
  await publishFiltersChanged(core, f.accountId);
  return k;
}

export async function changeKeyword(
  core: Core,
  k: FilterKeywordDoc,
  keyword: string,
  wholeWord: boolean,
): Promise<FilterKeywordDoc> {
  await collection(core.db, filterKeywords).updateOne({ _id: k._id }, { $set: { keyword, wholeWord } });
  await publishFiltersChanged(core, k.accountId);
  return { ...k, keyword, wholeWord };
}

export async function removeKeyword(core: Core, k: FilterKeywordDoc): Promise<void> {
  await collection(core.db, filterKeywords).deleteOne({ _id: k._id });
  await publishFiltersChanged(core, k.accountId);
}

export function statusEntriesOf(core: Core, f: FilterDoc): Promise<FilterStatusDoc[]> {
  return collection(core.db, filterStatuses).find({ filterId: f._id }).sort({ _id: 1 }).toArray();
}

export async function ownStatusEntry(core: Core, accountId: Id, id: Id | null): Promise<FilterStatusDoc> {
  const s = id === null ? null : await collection(core.db, filterStatuses).findOne({ _id: id, accountId });
  if (!s) throw notFound();
  return s;
}

/** Filters one status (not deleted) with `f`; a status already in it is a 422, as in Mastodon. */
export async function addStatusEntry(core: Core, f: FilterDoc, statusId: Id | null): Promise<FilterStatusDoc> {
  const status = statusId === null ? null : await findLiveStatus(core, statusId);
  if (!status) throw notFound();
  const entries = collection(core.db, filterStatuses);
  if (await entries.findOne({ filterId: f._id, statusId: status._id }))
    throw validationFailed('Status has already been taken');
  const doc: FilterStatusDoc = {
    _id: await nextSerialId(core.db, 'filter_statuses'),
    filterId: f._id,
    accountId: f.accountId,
    statusId: status._id,
    createdAt: new Date(),
  };
  await entries.insertOne(doc);
  await publishFiltersChanged(core, f.accountId);
  return doc;
}

export async function removeStatusEntry(core: Core, s: FilterStatusDoc): Promise<void> {
  await collection(core.db, filterStatuses).deleteOne({ _id: s._id });
  await publishFiltersChanged(core, s.accountId);
}

// ---- v1: a filter per keyword, addressed by the keyword's id ----

export interface V1Filter {
  f: FilterDoc;
  k: FilterKeywordDoc;
}

export async function ownV1Filter(core: Core, accountId: Id, id: Id | null): Promise<V1Filter> {
  const k = await ownKeyword(core, accountId, id);
  const f = await collection(core.db, filters).findOne({ _id: k.filterId });
  if (!f) throw notFound();
  return { f, k };
}

/** Every keyword of the account's filters, each with its filter, oldest first. */
export async function v1Filters(core: Core, accountId: Id): Promise<V1Filter[]> {
  const [fs, ks] = await Promise.all([
    collection(core.db, filters).find({ accountId }).toArray(),
    collection(core.db, filterKeywords).find({ accountId }).sort({ _id: 1 }).toArray(),
  ]);
  const byId = new Map<Id, FilterDoc>(fs.map((f) => [f._id, f]));
  return ks.flatMap((k) => {
    const f = byId.get(k.filterId);
    return f ? [{ f, k }] : [];
  });
}

export interface V1FilterInput {
  phrase: string;
  context: FilterContext[];
  irreversible: boolean;
  expiresAt: Date | null;
  wholeWord: boolean;
}

export async function createV1Filter(core: Core, accountId: Id, input: V1FilterInput): Promise<V1Filter> {
  const f = await createFilter(core, accountId, {
    title: input.phrase,
    context: input.context,
    action: input.irreversible ? 'hide' : 'warn',
    expiresAt: input.expiresAt,
    keywords: [{ keyword: input.phrase, wholeWord: input.wholeWord }],
  });
  const [k] = await keywordsOf(core, f);
  return { f, k };
}

/** Changes a v1 filter; its filter's settings only while the filter has this one keyword. */
export async function updateV1Filter(
  core: Core,
  { f, k }: V1Filter,
  set: Partial<Pick<FilterDoc, 'context' | 'action' | 'expiresAt'>>,
  keyword: string,
  wholeWord: boolean,
): Promise<V1Filter> {
  const changesFilter = set.context !== undefined || set.action !== undefined || set.expiresAt !== undefined;
  if (changesFilter && (await collection(core.db, filterKeywords).countDocuments({ filterId: f._id })) > 1)
    throw validationFailed('Cannot change context, irreversible or expiry of a filter with several keywords');
  const changes = { ...set, updatedAt: new Date() };
  await collection(core.db, filters).updateOne({ _id: f._id }, { $set: changes });
  await collection(core.db, filterKeywords).updateOne({ _id: k._id }, { $set: { keyword, wholeWord } });
  await publishFiltersChanged(core, f.accountId);
  return { f: { ...f, ...changes }, k: { ...k, keyword, wholeWord } };
}
