// Filter (v2), FilterKeyword, FilterStatus, FilterResult and V1::Filter (mastodon-api-entities.md §22).
import { Type } from '@sinclair/typebox';
import type { FilterDoc, FilterKeywordDoc, FilterStatusDoc } from '../model/filters.ts';
import type { FilterMatch } from '../filters/match.ts';

export const FilterKeywordEntity = Type.Object({
  id: Type.String(),
  keyword: Type.String(),
  whole_word: Type.Boolean(),
});
export const FilterStatusEntity = Type.Object({ id: Type.String(), status_id: Type.String() });
const filterProperties = {
  id: Type.String(),
  title: Type.String(),
  context: Type.Array(Type.String()),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  filter_action: Type.String(),
};
export const FilterEntity = Type.Object({
  ...filterProperties,
  keywords: Type.Array(FilterKeywordEntity),
  statuses: Type.Array(FilterStatusEntity),
});
export const V1FilterEntity = Type.Object({
  id: Type.String(),
  phrase: Type.String(),
  context: Type.Array(Type.String()),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  irreversible: Type.Boolean(),
  whole_word: Type.Boolean(),
});

export const presentKeyword = (k: FilterKeywordDoc) => ({
  id: String(k._id),
  keyword: k.keyword,
  whole_word: k.wholeWord,
});
export const presentFilterStatus = (s: FilterStatusDoc) => ({ id: String(s._id), status_id: String(s.statusId) });

function filterBase(f: FilterDoc) {
  return {
    id: String(f._id),
    title: f.title,
    context: f.context,
    expires_at: f.expiresAt ? f.expiresAt.toISOString() : null,
    filter_action: f.action,
  };
}

export function presentFilter(f: FilterDoc, keywords: FilterKeywordDoc[], statuses: FilterStatusDoc[]) {
  return { ...filterBase(f), keywords: keywords.map(presentKeyword), statuses: statuses.map(presentFilterStatus) };
}

export function presentV1Filter(f: FilterDoc, k: FilterKeywordDoc) {
  return {
    id: String(k._id),
    phrase: k.keyword,
    context: f.context,
    expires_at: f.expiresAt ? f.expiresAt.toISOString() : null,
    irreversible: f.action === 'hide',
    whole_word: k.wholeWord,
  };
}

export function presentFilterResults(matches: FilterMatch[]) {
  return matches.map((m) => ({
    filter: filterBase(m.filter),
    keyword_matches: m.keywordMatches,
    status_matches: m.statusMatches,
  }));
}
