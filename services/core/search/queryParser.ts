// Parses a status search query the way Mastodon's SearchQueryParser reads it: words (all must
// match), "quoted phrases", `-word` exclusions and the operators `from:`, `has:`, `is:`,
// `language:`, `before:`, `after:`, `during:` and `in:`. An unknown `prefix:value` is plain text.
import { foldText, isStopWord, pseudoTerm, words } from './tokenize.ts';

export interface ParsedQuery {
  /** Index terms every result holds (words and operator pseudo-terms other than `from:`). */
  terms: string[];
  /** Terms no result may hold. */
  excluded: string[];
  /** Folded phrases the result text must contain. */
  phrases: string[];
  /** `from:` values as written (`me`, `user`, `user@domain`), resolved to accounts by the caller. */
  from: string[];
  /** Created strictly before / at or after (ms since the epoch). */
  before: number | null;
  after: number | null;
  /** `in:library`: only what the caller wrote, was mentioned in, favourited, bookmarked or boosted. */
  libraryOnly: boolean;
}

const DAY_MS = 86_400_000;
const TOKEN_RE = /(-?)(?:([a-z]+):)?(?:"([^"]*)"|(\S+))/giu;

function parseDay(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const t = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(t) ? t : null;
}

export function parseStatusQuery(q: string): ParsedQuery {
  const out: ParsedQuery = {
    terms: [],
    excluded: [],
    phrases: [],
    from: [],
    before: null,
    after: null,
    libraryOnly: false,
  };
  const addText = (text: string, negated: boolean, quoted: boolean) => {
    const ws = words(text);
    if (negated) out.excluded.push(...ws);
    else {
      out.terms.push(...ws);
      if (quoted && ws.length > 1) out.phrases.push(foldText(text).replace(/\s+/g, ' ').trim());
    }
  };
  for (const m of q.matchAll(TOKEN_RE)) {
    const negated = m[1] === '-';
    const prefix = m[2]?.toLowerCase();
    const value = m[3] ?? m[4] ?? '';
    const quoted = m[3] !== undefined;
    const target = negated ? out.excluded : out.terms;
    switch (prefix) {
      case undefined:
        addText(value, negated, quoted);
        break;
      case 'from':
        if (!negated && value) out.from.push(value.replace(/^@/, '').toLowerCase());
        break;
      case 'has': {
        const v = value.toLowerCase();
        if (v === 'media') target.push(pseudoTerm.hasMedia);
        else if (v === 'poll') target.push(pseudoTerm.hasPoll);
        break;
      }
      case 'is': {
        const v = value.toLowerCase();
        if (v === 'reply') target.push(pseudoTerm.isReply);
        else if (v === 'sensitive') target.push(pseudoTerm.isSensitive);
        break;
      }
      case 'language':
        if (/^[a-z]{2,3}(-[a-z0-9]+)?$/i.test(value)) target.push(pseudoTerm.language(value));
        break;
      case 'before': {
        const t = parseDay(value);
        if (t !== null) out.before = out.before === null ? t : Math.min(out.before, t);
        break;
      }
      case 'after': {
        const t = parseDay(value);
        if (t !== null) out.after = Math.max(out.after ?? 0, t + DAY_MS);
        break;
      }
      case 'during': {
        const t = parseDay(value);
        if (t !== null) {
          out.after = Math.max(out.after ?? 0, t);
          out.before = out.before === null ? t + DAY_MS : Math.min(out.before, t + DAY_MS);
        }
        break;
      }
      case 'in':
        if (value.toLowerCase() === 'library') out.libraryOnly = true;
        break;
      default:
        addText(`${prefix}:${value}`, negated, quoted);
    }
  }
  out.terms = [...new Set(out.terms)];
  out.excluded = [...new Set(out.excluded)].filter((t) => !out.terms.includes(t));
  return out;
}

/** True when the query asks for nothing but stop words. */
export function onlyStopWords(q: string): boolean {
  const raw = foldText(q).match(/[\p{L}\p{N}_]+/gu) ?? [];
  return raw.length > 0 && raw.every(isStopWord);
}
