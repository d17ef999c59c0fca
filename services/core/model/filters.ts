// Custom filters (v2): a filter with a title, contexts, an action and an optional expiry; its
// keywords and status entries live in their own collections (their ids are API ids).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export const FILTER_CONTEXTS = ['home', 'notifications', 'public', 'thread', 'account'] as const;
export type FilterContext = (typeof FILTER_CONTEXTS)[number];
export type FilterAction = 'warn' | 'hide' | 'blur';

export interface FilterDoc {
  _id: Id;
  accountId: Id;
  title: string;
  context: FilterContext[];
  action: FilterAction;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface FilterKeywordDoc {
  _id: Id;
  filterId: Id;
  accountId: Id;
  keyword: string;
  wholeWord: boolean;
  createdAt: Date;
}

export interface FilterStatusDoc {
  _id: Id;
  filterId: Id;
  accountId: Id;
  statusId: Id;
  createdAt: Date;
}

export const filters = defineCollection<FilterDoc>('filters', [{ key: { accountId: 1, _id: 1 }, name: 'account' }]);
export const filterKeywords = defineCollection<FilterKeywordDoc>('filter_keywords', [
  { key: { filterId: 1, _id: 1 }, name: 'filter' },
  { key: { accountId: 1 }, name: 'account' },
]);
export const filterStatuses = defineCollection<FilterStatusDoc>('filter_statuses', [
  { key: { filterId: 1, _id: 1 }, name: 'filter' },
  { key: { accountId: 1, statusId: 1 }, name: 'account_status' },
]);
