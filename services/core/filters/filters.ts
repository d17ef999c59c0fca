// Custom filters (v2) written by the API (/api/v2/filters) and the /filters pages alike: a filter
// with its keywords, created, changed (keywords added, changed or removed in one go) and deleted.
// Each change publishes one `filters_changed`.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { notFound, validationFailed } from '../errors.ts';
import {
  filterKeywords,
  filterStatuses,
  filters,
  type FilterAction,
  type FilterContext,
  type FilterDoc,
  type FilterKeywordDoc,
  type FilterStatusDoc,
} from '../model/filters.ts';
import { publishFiltersChanged } from './changes.ts';

export const FILTER_TITLE_MAX = 256;

export interface FilterWithParts {
  filter: FilterDoc;
  keywords: FilterKeywordDoc[];
  statuses: FilterStatusDoc[];
}

export function filterTitle(raw: unknown): string {
  const title = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
  if (!title) throw validationFailed("Title can't be blank");
  if (title.length > FILTER_TITLE_MAX) throw validationFailed('Title is too long');
  return title;
}

export async function ownFilter(core: Core, accountId: Id, id: Id | null): Promise<FilterDoc> {
  const f = id === null ? null : await collection(core.db, filters).findOne({ _id: id, accountId });
  if (!f) throw notFound();
  return f;
}

export async function filterParts(core: Core, f: FilterDoc): Promise<FilterWithParts> {
  const [keywords, sts] = await Promise.all([
    collection(core.db, filterKeywords).find({ filterId: f._id }).sort({ _id: 1 }).toArray(),
    collection(core.db, filterStatuses).find({ filterId: f._id }).sort({ _id: 1 }).toArray(),
  ]);
  return { filter: f, keywords, statuses: sts };
}

export async function listFilters(core: Core, accountId: Id): Promise<FilterWithParts[]> {
  const fs = await collection(core.db, filters).find({ accountId }).sort({ _id: 1 }).toArray();
  return Promise.all(fs.map((f) => filterParts(core, f)));
}

export async function addFilterKeyword(
  core: Core,
  f: FilterDoc,
  keyword: string,
  wholeWord: boolean,
): Promise<FilterKeywordDoc> {
  const doc: FilterKeywordDoc = {
    _id: await nextSerialId(core.db, 'filter_keywords'),
    filterId: f._id,
    accountId: f.accountId,
    keyword,
    wholeWord,
    createdAt: new Date(),
  };
  await collection(core.db, filterKeywords).insertOne(doc);
  return doc;
}

export interface FilterInput {
  title: string;
  context: FilterContext[];
  action: FilterAction;
  expiresAt: Date | null;
  keywords: Array<{ keyword: string; wholeWord: boolean }>;
}

export async function createFilter(core: Core, accountId: Id, input: FilterInput): Promise<FilterDoc> {
  const now = new Date();
  const f: FilterDoc = {
    _id: await nextSerialId(core.db, 'filters'),
    accountId,
    title: input.title,
    context: input.context,
    action: input.action,
    expiresAt: input.expiresAt,
    createdAt: now,
    updatedAt: now,
  };
  await collection(core.db, filters).insertOne(f);
  for (const k of input.keywords) await addFilterKeyword(core, f, k.keyword, k.wholeWord);
  await publishFiltersChanged(core, accountId);
  return f;
}

/** A keyword change: with `id` an existing keyword (changed, or removed with `destroy`), else a new one. */
export interface KeywordChange {
  id?: Id;
  keyword?: string;
  wholeWord?: boolean;
  destroy?: boolean;
}

/** Changes a filter; every keyword change is checked before anything is written. */
export async function updateFilter(
  core: Core,
  f: FilterDoc,
  set: Partial<Pick<FilterDoc, 'title' | 'context' | 'action' | 'expiresAt'>>,
  keywords: KeywordChange[] = [],
): Promise<FilterDoc> {
  const K = collection(core.db, filterKeywords);
  const existing = new Map((await K.find({ filterId: f._id }).toArray()).map((k) => [String(k._id), k]));
  const ops = keywords.map((c) => {
    const current = c.id === undefined ? undefined : existing.get(String(c.id));
    if (c.id !== undefined && !current) throw notFound();
    if (c.destroy) return { kind: 'destroy' as const, id: current?._id };
    const keyword = c.keyword ?? current?.keyword;
    if (keyword === undefined) throw validationFailed("Keyword can't be blank");
    return {
      kind: current ? ('update' as const) : ('create' as const),
      id: current?._id,
      keyword,
      wholeWord: c.wholeWord ?? current?.wholeWord ?? true,
    };
  });
  const changes = { ...set, updatedAt: new Date() };
  await collection(core.db, filters).updateOne({ _id: f._id }, { $set: changes });
  for (const op of ops) {
    if (op.kind === 'destroy') {
      if (op.id !== undefined) await K.deleteOne({ _id: op.id });
    } else if (op.kind === 'update')
      await K.updateOne({ _id: op.id }, { $set: { keyword: op.keyword, wholeWord: op.wholeWord } });
    else await addFilterKeyword(core, f, op.keyword, op.wholeWord);
  }
  await publishFiltersChanged(core, f.accountId);
  return { ...f, ...changes };
}

export async function deleteFilter(core: Core, f: FilterDoc): Promise<void> {
  await Promise.all([
    collection(core.db, filterKeywords).deleteMany({ filterId: f._id }),
    collection(core.db, filterStatuses).deleteMany({ filterId: f._id }),
  ]);
  await collection(core.db, filters).deleteOne({ _id: f._id });
  await publishFiltersChanged(core, f.accountId);
}
