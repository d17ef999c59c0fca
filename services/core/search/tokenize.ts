// Words of a status for the search index: case-, width- and accent-folded runs of letters and
// digits (hashtags and mention names included, URLs reduced to their host and path words), plus
// pseudo-terms for the search operators (`has:media`, `is:reply`, `lang:en`, `from:<accountId>`),
// so every operator is one more posting list to intersect.
import type { StatusDoc } from '../model/statuses.ts';

const WORD_RE = /[\p{L}\p{N}_]+/gu;
/** Longer "words" are hashes, base64 and the like: nobody searches for them. */
const MAX_TERM_LENGTH = 40;
/** Words too common to be worth a posting list (Mastodon's analyser drops English stop words too). */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

/** Lower-cased, width- and accent-folded text (the same folding as hashtag names). */
export function foldText(text: string): string {
  return text.normalize('NFKC').toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '').normalize('NFC');
}

/** The distinct indexable words of `text`, in order of first appearance. */
export function words(text: string): string[] {
  const out = new Set<string>();
  for (const m of foldText(text).matchAll(WORD_RE)) {
    const w = m[0];
    if (w.length > MAX_TERM_LENGTH || STOP_WORDS.has(w)) continue;
    out.add(w);
  }
  return [...out];
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Plain text of rendered HTML (remote statuses have no source text). */
export function htmlToText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) =>
      e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'nbsp' ? ' ' : "'",
    );
}

/** The searchable text of a status: content warning and body. */
export function searchableText(status: Pick<StatusDoc, 'text' | 'content' | 'spoilerText' | 'local'>): string {
  const body = status.text || htmlToText(status.content);
  return status.spoilerText ? `${status.spoilerText}\n${body}` : body;
}

export const pseudoTerm = {
  from: (accountId: bigint | string) => `from:${accountId}`,
  hasMedia: 'has:media',
  hasPoll: 'has:poll',
  isReply: 'is:reply',
  isSensitive: 'is:sensitive',
  language: (code: string) => `lang:${code.toLowerCase()}`,
};

/** The fields of a status its index terms come from. */
export type TermFields = Pick<
  StatusDoc,
  | 'text'
  | 'content'
  | 'spoilerText'
  | 'local'
  | 'accountId'
  | 'mediaIds'
  | 'pollId'
  | 'inReplyToId'
  | 'sensitive'
  | 'language'
>;

/** Every term a status is indexed under: its words and its operator pseudo-terms. */
export function statusTerms(status: TermFields): string[] {
  const terms = words(searchableText(status));
  terms.push(pseudoTerm.from(status.accountId));
  if (status.mediaIds.length > 0) terms.push(pseudoTerm.hasMedia);
  if (status.pollId !== null) terms.push(pseudoTerm.hasPoll);
  if (status.inReplyToId !== null) terms.push(pseudoTerm.isReply);
  if (status.sensitive) terms.push(pseudoTerm.isSensitive);
  if (status.language) terms.push(pseudoTerm.language(status.language));
  return terms;
}
