// Finds the entities of a plain-text status the way Mastodon's extractor does: URLs with an
// http(s) scheme (through linkifyjs), `@user` / `@user@domain` mentions and `#hashtags`.
// Mentions and hashtags inside a URL are part of the URL.
import { find as findLinks } from 'linkifyjs';
import { TtlCache } from '../cache/ttlCache.ts';

export type TextEntity =
  | { kind: 'url'; start: number; end: number; url: string }
  | { kind: 'mention'; start: number; end: number; username: string; domain: string | null }
  | { kind: 'hashtag'; start: number; end: number; name: string };

// Mastodon's MENTION_RE and USERNAME_RE, in Unicode-aware JavaScript.
// The domain may carry a port (servers federating on one machine: @bob@localhost:3001).
const MENTION_RE =
  /(?<![=/\p{L}\p{N}_])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@([\p{L}\p{N}_.-]+[\p{L}\p{N}_](?::\d{1,5}(?!\d))?))?/giu;
// A hashtag holds at least one letter or underscore (so `#1` is not one).
const HASHTAG_RE = /(?<![=/)\p{L}\p{N}_&])#([\p{L}\p{N}_]*[\p{L}_][\p{L}\p{N}_]*)/gu;
const URL_SCHEME = /^https?:\/\//i;

export const MAX_HASHTAG_LENGTH = 256;

// One post's text is extracted by its length check, its mention lookup, its formatter and its tag
// list (and again by the link-preview pipeline): the result is kept for a moment, frozen.
const recent = new TtlCache<string, readonly TextEntity[]>(10_000, 256);
const MEMO_MAX_LENGTH = 5_000;

export function extractEntities(text: string): readonly TextEntity[] {
  if (text.length > MEMO_MAX_LENGTH) return extract(text);
  const now = Date.now();
  const kept = recent.get(text, now);
  if (kept) return kept;
  const found = Object.freeze(extract(text).map((e) => Object.freeze(e)));
  recent.set(text, found, now);
  return found;
}

// Only links with a scheme count: a text without one needs no linkify scan (most posts).
const HAS_SCHEME = /https?:\/\//i;

function extract(text: string): TextEntity[] {
  const urls: TextEntity[] = (HAS_SCHEME.test(text) ? findLinks(text) : [])
    .filter((l) => l.type === 'url' && URL_SCHEME.test(l.value))
    .map((l) => ({ kind: 'url', start: l.start, end: l.end, url: l.value }));
  const insideUrl = (start: number, end: number) => urls.some((u) => start < u.end && end > u.start);
  const out: TextEntity[] = [...urls];
  for (const m of text.matchAll(MENTION_RE)) {
    const start = m.index;
    const end = start + m[0].length;
    if (insideUrl(start, end)) continue;
    out.push({ kind: 'mention', start, end, username: m[1], domain: m[2] ? m[2].toLowerCase() : null });
  }
  for (const m of text.matchAll(HASHTAG_RE)) {
    const start = m.index;
    const end = start + m[0].length;
    if (insideUrl(start, end) || m[1].length > MAX_HASHTAG_LENGTH) continue;
    out.push({ kind: 'hashtag', start, end, name: m[1] });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Lower-cased, width- and accent-folded tag name, as Mastodon's HashtagNormalizer. */
export function normalizeTagName(name: string): string {
  return name.normalize('NFKC').toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '').normalize('NFC');
}
