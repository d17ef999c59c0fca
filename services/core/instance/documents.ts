// The admin-written documents of the instance (descriptions, privacy policy, terms, the closed
// registrations message): plain text becomes paragraphs, HTML is kept to harmless text markup.
import sanitizeHtml from 'sanitize-html';
import type { Core } from '../context.ts';

/** Admin-written HTML: the usual text markup, links, headings and lists; nothing active. */
function adminHtml(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: [
      'p',
      'br',
      'a',
      'strong',
      'b',
      'em',
      'i',
      'ul',
      'ol',
      'li',
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'blockquote',
      'code',
      'pre',
      'hr',
      'del',
      'span',
    ],
    allowedAttributes: { a: ['href', 'rel', 'target'] },
    allowedSchemes: ['http', 'https', 'mailto'],
  });
}

/** Plain text as HTML paragraphs, or admin HTML as is (sanitised). */
export function asHtml(text: string): string {
  if (/<[a-z][\s\S]*>/i.test(text)) return adminHtml(text);
  const escaped = sanitizeHtml(text, { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: 'escape' });
  return escaped
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== '')
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('');
}

export function defaultPrivacyPolicy(core: Pick<Core, 'config'>): string {
  const domain = core.config.localDomain;
  return asHtml(
    `This privacy policy describes how ${domain} collects, protects and uses the personal information you may provide.\n\n` +
      'We collect the basic account information you give us at sign-up, the content you post, and technical data ' +
      '(IP addresses and browser information) to operate the service and keep it safe. Public and unlisted posts are ' +
      'visible to anyone and are shared with other servers that follow you; followers-only and direct posts go only to ' +
      'their recipients. You can export or delete your data from your account settings.',
  );
}
