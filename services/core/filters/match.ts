// Applying custom filters to statuses (Mastodon's CustomFilter.apply_cached_filters): every
// active (unexpired) filter of the viewer, keywords matched case-insensitively in the status's
// spoiler text and plain text, whole-word keywords only at word boundaries (Unicode letters,
// digits and underscore count as word characters; a boundary is only required on a side of the
// keyword that is itself a word character, as Mastodon builds its regex), status entries by id.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { filterKeywords, filterStatuses, filters, type FilterDoc, type FilterKeywordDoc } from '../model/filters.ts';
import type { StatusDoc } from '../model/statuses.ts';

export interface ActiveFilter {
  filter: FilterDoc;
  keywords: { keyword: string; regex: RegExp }[];
  statusIds: Set<bigint>;
}

export interface FilterMatch {
  filter: FilterDoc;
  keywordMatches: string[] | null;
  statusMatches: string[] | null;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const WORD = /^[\p{L}\p{N}\p{M}_]/u;
const WORD_END = /[\p{L}\p{N}\p{M}_]$/u;

export function keywordRegex(k: Pick<FilterKeywordDoc, 'keyword' | 'wholeWord'>): RegExp {
  const body = escape(k.keyword);
  if (!k.wholeWord) return new RegExp(body, 'iu');
  const start = WORD.test(k.keyword) ? '(?<![\\p{L}\\p{N}\\p{M}_])' : '';
  const end = WORD_END.test(k.keyword) ? '(?![\\p{L}\\p{N}\\p{M}_])' : '';
  return new RegExp(`${start}${body}${end}`, 'iu');
}

/** The viewer's unexpired filters with their keywords and status entries. */
export async function activeFilters(core: Core, accountId: Id, now = new Date()): Promise<ActiveFilter[]> {
  const fs = await collection(core.db, filters)
    .find({ accountId, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] })
    .toArray();
  return filtersWithEntries(core, fs);
}

/** The filters with their keywords and status entries (of any accounts: one read for all). */
export async function filtersWithEntries(core: Core, fs: FilterDoc[]): Promise<ActiveFilter[]> {
  if (fs.length === 0) return [];
  const ids = fs.map((f) => f._id);
  const [kws, sts] = await Promise.all([
    collection(core.db, filterKeywords)
      .find({ filterId: { $in: ids } })
      .toArray(),
    collection(core.db, filterStatuses)
      .find({ filterId: { $in: ids } })
      .toArray(),
  ]);
  const byFilter = new Map(fs.map((f) => [f._id, { filter: f, keywords: [], statusIds: new Set() } as ActiveFilter]));
  for (const k of kws) byFilter.get(k.filterId)?.keywords.push({ keyword: k.keyword, regex: keywordRegex(k) });
  for (const s of sts) byFilter.get(s.filterId)?.statusIds.add(s.statusId);
  return [...byFilter.values()];
}

/** Plain text of rendered HTML: tags dropped, paragraphs and breaks as newlines, entities decoded. */
export function plainText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The matches of `active` on a status (for a reblog, pass the original). */
export function matchFilters(
  active: ActiveFilter[],
  status: Pick<StatusDoc, '_id' | 'content' | 'spoilerText'>,
): FilterMatch[] {
  if (active.length === 0) return [];
  const text = `${status.spoilerText}\n\n${plainText(status.content)}`;
  const out: FilterMatch[] = [];
  for (const a of active) {
    const keywordMatches = a.keywords.filter((k) => k.regex.test(text)).map((k) => k.keyword);
    const statusMatches = a.statusIds.has(status._id) ? [String(status._id)] : [];
    if (keywordMatches.length === 0 && statusMatches.length === 0) continue;
    out.push({
      filter: a.filter,
      keywordMatches: keywordMatches.length ? keywordMatches : null,
      statusMatches: statusMatches.length ? statusMatches : null,
    });
  }
  return out;
}
