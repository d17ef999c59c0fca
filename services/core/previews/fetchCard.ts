// Fetching a preview card for a link (Mastodon's FetchLinkCardService): the page through the
// SSRF-safe client (activitypub/safeFetch.ts: special addresses refused unless
// ALLOWED_PRIVATE_ADDRESSES allows them, every redirect checked again), 1 MiB and 5 s at most,
// then its OpenGraph tags, or its oEmbed document when the page links one. Remote HTML is hostile:
// only text fields are kept, and an embed's HTML is reduced to a single https iframe.
import { Parser } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';
import type { Config } from '../config.ts';
import type { StatusDoc } from '../model/statuses.ts';
import type { PreviewCardType } from '../model/previewCards.ts';
import { safeFetch, FetchError } from '../activitypub/safeFetch.ts';
import { extractEntities } from '../text/extract.ts';
import type { CardFields } from './cards.ts';

export const CARD_MAX_BYTES = 1024 * 1024;
export const CARD_TIMEOUT_MS = 5_000;
const MAX_TEXT = 2000;

/** The first http(s) link of a status that is neither a mention nor a hashtag. */
export function firstLink(status: Pick<StatusDoc, 'text' | 'content' | 'local'>): string | null {
  if (status.text) {
    const url = extractEntities(status.text).find((e) => e.kind === 'url');
    return url && url.kind === 'url' ? url.url : null;
  }
  // Remote statuses: the first anchor that is not a mention or hashtag link.
  let found: string | null = null;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (found || name !== 'a' || !attrs.href) return;
      const cls = ` ${attrs.class ?? ''} `;
      if (/ (mention|hashtag|u-url) /.test(cls) || (attrs.rel ?? '').includes('tag')) return;
      if (/^https?:\/\//i.test(attrs.href)) found = attrs.href;
    },
  });
  parser.write(status.content);
  parser.end();
  return found;
}

interface PageMeta {
  og: Record<string, string>;
  meta: Record<string, string>;
  title: string;
  lang: string | null;
  oembed: string | null;
}

export function parsePage(html: string): PageMeta {
  const out: PageMeta = { og: {}, meta: {}, title: '', lang: null, oembed: null };
  let inTitle = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'html' && attrs.lang) out.lang = attrs.lang;
        else if (name === 'title') inTitle = true;
        else if (name === 'meta') {
          const key = (attrs.property ?? attrs.name ?? '').toLowerCase();
          const content = attrs.content;
          if (!key || content === undefined) return;
          if (key.startsWith('og:') || key.startsWith('article:')) out.og[key] ??= content;
          else out.meta[key] ??= content;
        } else if (name === 'link' && (attrs.rel ?? '').toLowerCase() === 'alternate') {
          if ((attrs.type ?? '').toLowerCase() === 'application/json+oembed' && attrs.href) out.oembed ??= attrs.href;
        }
      },
      ontext(text) {
        if (inTitle) out.title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

const clip = (s: string | undefined, n = MAX_TEXT) => (s ?? '').replace(/\s+/g, ' ').trim().slice(0, n);

function absolute(base: string, href: string | undefined): string | null {
  if (!href) return null;
  try {
    const u = new URL(href, base);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/** An oEmbed `html` reduced to one iframe with an https source, or '' . */
export function safeEmbedHtml(html: unknown): string {
  if (typeof html !== 'string') return '';
  const clean = sanitizeHtml(html, {
    allowedTags: ['iframe'],
    allowedAttributes: { iframe: ['src', 'width', 'height', 'allowfullscreen', 'frameborder', 'title'] },
    allowedSchemes: ['https'],
    allowedIframeHostnames: undefined,
  });
  return /^<iframe[^>]+src="https:\/\//.test(clean) ? clean : '';
}

function int(v: unknown): number {
  const n = Math.trunc(Number(v));
  return Number.isFinite(n) && n > 0 && n < 100_000 ? n : 0;
}

/** Links may be plain http, unlike federation: the address checks stay the same. */
function linkConfig(config: Config): Config {
  return { ...config, federation: { ...config.federation, allowHttp: true } };
}

/** Fetches and parses the card of `url`; null when the page gives nothing usable or is refused. */
export async function fetchCard(config: Config, url: string): Promise<CardFields | null> {
  const deadline = Date.now() + CARD_TIMEOUT_MS;
  const cfg = linkConfig(config);
  let res;
  try {
    res = await safeFetch(cfg, url, {
      headers: { accept: 'text/html,application/xhtml+xml' },
      maxBytes: CARD_MAX_BYTES,
      timeoutMs: CARD_TIMEOUT_MS,
    });
  } catch (err) {
    if (err instanceof FetchError) return null;
    throw err;
  }
  if (res.status !== 200 || !/html/i.test(res.headers['content-type'] ?? '')) return null;
  const page = parsePage(res.body.toString('utf8'));
  const base = res.url;
  const card: CardFields = {
    url,
    title: clip(page.og['og:title'] ?? page.title, 200),
    description: clip(page.og['og:description'] ?? page.meta.description),
    type: 'link',
    authorName: clip(page.meta.author, 200),
    authorUrl: '',
    providerName: clip(page.og['og:site_name'], 200),
    providerUrl: '',
    html: '',
    width: int(page.og['og:image:width']),
    height: int(page.og['og:image:height']),
    image: absolute(base, page.og['og:image'] ?? page.og['og:image:url']),
    embedUrl: '',
    language: page.lang ? (page.lang.split(/[-_]/)[0] as string).toLowerCase().slice(0, 3) : null,
    publishedAt: (() => {
      const t = Date.parse(page.og['article:published_time'] ?? '');
      return Number.isFinite(t) ? new Date(t) : null;
    })(),
  };
  const oembedUrl = absolute(base, page.oembed ?? undefined);
  if (oembedUrl && Date.now() < deadline) {
    try {
      const o = await safeFetch(cfg, oembedUrl, {
        headers: { accept: 'application/json' },
        maxBytes: CARD_MAX_BYTES,
        timeoutMs: Math.max(1, deadline - Date.now()),
      });
      if (o.status === 200) {
        const doc = JSON.parse(o.body.toString('utf8')) as Record<string, unknown>;
        const type = (['photo', 'video', 'rich', 'link'] as const).find((t) => t === doc.type) as
          PreviewCardType | undefined;
        if (type) {
          card.type = type;
          if (typeof doc.title === 'string') card.title = clip(doc.title, 200);
          if (typeof doc.author_name === 'string') card.authorName = clip(doc.author_name, 200);
          card.authorUrl = absolute(base, typeof doc.author_url === 'string' ? doc.author_url : undefined) ?? '';
          if (typeof doc.provider_name === 'string') card.providerName = clip(doc.provider_name, 200);
          card.providerUrl = absolute(base, typeof doc.provider_url === 'string' ? doc.provider_url : undefined) ?? '';
          card.width = int(doc.width) || card.width;
          card.height = int(doc.height) || card.height;
          if (type === 'photo') card.embedUrl = absolute(base, typeof doc.url === 'string' ? doc.url : undefined) ?? '';
          if (type === 'video' || type === 'rich') {
            card.html = safeEmbedHtml(doc.html);
            if (!card.html) card.type = 'link';
          }
          if (typeof doc.thumbnail_url === 'string') card.image = absolute(base, doc.thumbnail_url) ?? card.image;
        }
      }
    } catch (err) {
      if (!(err instanceof FetchError) && !(err instanceof SyntaxError)) throw err;
    }
  }
  if (!card.title && card.type === 'link') return null;
  return card;
}
