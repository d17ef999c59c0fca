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

// Printable ASCII, tabs and newlines: one grapheme per character but for CR LF, which is one.
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

export function graphemeLength(text: string): number {
  if (PLAIN_ASCII.test(text)) return text.length - (text.includes('\r\n') ? text.split('\r\n').length - 1 : 0);
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** Characters counted against the status limit for a text and its content warning. */
export function countStatusCharacters(text: string, spoilerText = ''): number {
  return graphemeLength(countableText(spoilerText)) + graphemeLength(countableText(text));
}
