// Remote HTML reduced to Mastodon's allowed subset (federation reference §8.4, "MASTODON_STRICT"):
// an allowlist of elements, attributes and classes; headings become bold paragraphs; links get
// rel="nofollow noopener" target="_blank" and only safe schemes; everything else is unwrapped
// (text kept) or dropped with its content (script, style). Stored sanitised, so every reader of
// the API gets safe HTML. Display names and content warnings are plain text.
import sanitizeHtml from 'sanitize-html';

const ALLOWED_SCHEMES = ['http', 'https', 'dat', 'dweb', 'ipfs', 'ipns', 'ssb', 'gopher', 'xmpp', 'magnet', 'gemini'];
const CLASS_OK = /^(h|p|u|dt|e)-[a-z0-9-]+$|^(mention|hashtag|ellipsis|invisible|quote-inline)$/;

function keepClasses(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const kept = value.split(/\s+/).filter((c) => CLASS_OK.test(c));
  return kept.length ? kept.join(' ') : undefined;
}

const heading = (_tag: string, attribs: sanitizeHtml.Attributes) => ({ tagName: 'strong', attribs });

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'span',
    'a',
    'del',
    's',
    'pre',
    'blockquote',
    'code',
    'b',
    'strong',
    'u',
    'i',
    'em',
    'ul',
    'ol',
    'li',
    'ruby',
    'rt',
    'rp',
  ],
  allowedAttributes: {
    a: ['href', 'rel', 'class', 'translate'],
    span: ['class', 'translate'],
    ol: ['start', 'reversed'],
    li: ['value'],
    p: ['class'],
  },
  allowedSchemes: ALLOWED_SCHEMES,
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'template', 'iframe', 'object'],
  transformTags: {
    h1: heading,
    h2: heading,
    h3: heading,
    h4: heading,
    h5: heading,
    h6: heading,
    a: (tagName, attribs) => {
      const out: sanitizeHtml.Attributes = { ...attribs, rel: 'nofollow noopener', target: '_blank' };
      const cls = keepClasses(attribs.class);
      if (cls) out.class = cls;
      else delete out.class;
      if (out.translate !== 'no') delete out.translate;
      return { tagName, attribs: out };
    },
    span: (tagName, attribs) => {
      const out: sanitizeHtml.Attributes = {};
      const cls = keepClasses(attribs.class);
      if (cls) out.class = cls;
      if (attribs.translate === 'no') out.translate = 'no';
      return { tagName, attribs: out };
    },
    p: (tagName, attribs) => {
      const cls = keepClasses(attribs.class);
      const out: sanitizeHtml.Attributes = {};
      if (cls) out.class = cls;
      return { tagName, attribs: out };
    },
  },
  exclusiveFilter: (frame) => frame.tag === 'a' && !frame.attribs.href && frame.text === '',
};

// `target` is forced onto links after the allowlist check, so it must be allowed on `a`.
(OPTIONS.allowedAttributes as Record<string, string[]>).a.push('target');

/** Remote HTML (status content, bio, field values) as the subset we store and serve. */
export function sanitizeRemoteHtml(html: string, maxLength = 500_000): string {
  return sanitizeHtml(html.slice(0, maxLength), OPTIONS);
}

/** Plain text from remote input (display names, CWs): control characters removed, trimmed, capped. */
export function plainText(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  return [...value.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').trim()].slice(0, max).join('');
}
