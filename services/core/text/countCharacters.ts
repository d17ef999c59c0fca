// Mastodon's status length rule: every URL counts as 23 characters, a remote mention only as its
// `@user` part, and everything is counted in grapheme clusters (an emoji sequence is one).
import { extractEntities } from './extract.ts';

export const CHARACTERS_RESERVED_PER_URL = 23;
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function countableText(text: string): string {
  let out = '';
  let pos = 0;
  for (const e of extractEntities(text)) {
    if (e.kind === 'hashtag') continue;
    out += text.slice(pos, e.start);
    out += e.kind === 'url' ? 'x'.repeat(CHARACTERS_RESERVED_PER_URL) : `@${e.username}`;
    pos = e.end;
  }
  return out + text.slice(pos);
}

export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** Characters counted against the status limit for a text and its content warning. */
export function countStatusCharacters(text: string, spoilerText = ''): number {
  return graphemeLength(countableText(spoilerText)) + graphemeLength(countableText(text));
}
