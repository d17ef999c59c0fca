// Plain status text → Mastodon-style HTML (reference conventions §9.1): escaped text, links shown
// shortened, resolved mentions and hashtags linked, paragraphs and line breaks. The result passes
// through sanitize-html as a last guard, allowing only the markup produced here.
import sanitizeHtml from 'sanitize-html';
import { extractEntities } from './extract.ts';

export interface MentionTarget {
  /** Profile URL of the mentioned account. */
  url: string;
  /** Shown after `@`: the username, or user@domain when it is ambiguous. */
  display: string;
}

export interface FormatOptions {
  /** Base URL of this server (for hashtag links), without a trailing slash. */
  baseUrl: string;
  /** Resolves a mention (username, domain or null for local) to its account; null leaves it as text. */
  resolveMention: (username: string, domain: string | null) => MentionTarget | null;
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'span', 'a'],
  allowedAttributes: { a: ['href', 'rel', 'class', 'target', 'translate'], span: ['class', 'translate'] },
  allowedSchemes: ['http', 'https'],
  allowProtocolRelative: false,
};

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const URL_PREFIX = /^(https?:\/\/(?:www\.)?)/i;

/** `<a>` for a URL shown shortened: prefix and remainder hidden, 30 characters visible. */
export function linkHtml(url: string): string {
  const prefix = URL_PREFIX.exec(url)?.[1] ?? '';
  const rest = url.slice(prefix.length);
  const display = rest.slice(0, 30);
  const remainder = rest.slice(30);
  return (
    `<a href="${escapeHtml(url)}" target="_blank" rel="nofollow noopener" translate="no">` +
    `<span class="invisible">${escapeHtml(prefix)}</span>` +
    `<span class="${remainder ? 'ellipsis' : ''}">${escapeHtml(display)}</span>` +
    `<span class="invisible">${escapeHtml(remainder)}</span></a>`
  );
}

function mentionHtml(target: MentionTarget): string {
  return `<span class="h-card" translate="no"><a href="${escapeHtml(target.url)}" class="u-url mention">@<span>${escapeHtml(target.display)}</span></a></span>`;
}

function hashtagHtml(baseUrl: string, name: string): string {
  return `<a href="${escapeHtml(`${baseUrl}/tags/${encodeURIComponent(name)}`)}" class="mention hashtag" rel="tag">#<span>${escapeHtml(name)}</span></a>`;
}

/** Rails' simple_format with Mastodon's removal of the remaining newlines. */
function paragraphs(html: string): string {
  return html
    .split(/\n{2,}/)
    .filter((p) => p.length > 0)
    .map((p) => `<p>${p.replace(/\n/g, '<br />')}</p>`)
    .join('');
}

export function formatStatusHtml(text: string, opts: FormatOptions): string {
  const source = text.replace(/\r\n?/g, '\n');
  if (source.trim() === '') return '';
  let html = '';
  let pos = 0;
  for (const e of extractEntities(source)) {
    let markup: string | null;
    if (e.kind === 'url') markup = linkHtml(e.url);
    else if (e.kind === 'hashtag') markup = hashtagHtml(opts.baseUrl, e.name);
    else {
      const target = opts.resolveMention(e.username, e.domain);
      markup = target ? mentionHtml(target) : null;
    }
    if (markup === null) continue;
    html += escapeHtml(source.slice(pos, e.start)) + markup;
    pos = e.end;
  }
  html += escapeHtml(source.slice(pos));
  // sanitize-html drops empty class attributes; Mastodon renders a short link's display span as
  // `<span class="">` (it follows the invisible prefix span; escaped user text has no `<`).
  return sanitizeHtml(paragraphs(html), SANITIZE).replace(
    /(<span class="invisible">[^<]*<\/span>)<span>/g,
    '$1<span class="">',
  );
}
