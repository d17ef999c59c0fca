// RSS 2.0 feeds as Mastodon serves them (/@user.rss, /tags/NAME.rss): channel with title,
// description, link, image, lastBuildDate, webfeeds:icon and generator; one item per status with
// link, pubDate, the HTML description (content warning first), media:content per attachment and a
// category per hashtag.
import type { Status } from '../../core/entities/status.ts';
import { emojify } from './present.ts';

function xml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export interface Channel {
  title: string;
  description: string;
  link: string;
  image: string | null;
  generator: string;
}

/** Mastodon's rss_status_content_format: the CW as a paragraph, then the content, emojis as images. */
function itemDescription(s: Status): string {
  const content = emojify(s.content ?? '', s.emojis);
  if (!s.spoiler_text) return content;
  return `<p>${emojify(xml(s.spoiler_text), s.emojis)}</p><hr />${content}`;
}

function medium(type: string): string {
  return type === 'gifv' ? 'image' : type === 'unknown' ? 'document' : type;
}

export function renderRss(channel: Channel, items: Status[], itemLink: (s: Status) => string): string {
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:webfeeds="http://webfeeds.org/rss/1.0" xmlns:media="http://search.yahoo.com/mrss/">',
    '<channel>',
    `<title>${xml(channel.title)}</title>`,
    `<description>${xml(channel.description)}</description>`,
    `<link>${xml(channel.link)}</link>`,
  ];
  if (channel.image)
    out.push(
      `<image><url>${xml(channel.image)}</url><title>${xml(channel.title)}</title><link>${xml(channel.link)}</link></image>`,
    );
  if (items.length > 0) out.push(`<lastBuildDate>${new Date(items[0].created_at).toUTCString()}</lastBuildDate>`);
  if (channel.image) out.push(`<webfeeds:icon>${xml(channel.image)}</webfeeds:icon>`);
  out.push(`<generator>${xml(channel.generator)}</generator>`);
  for (const s of items) {
    const link = itemLink(s);
    out.push('<item>', `<guid isPermaLink="true">${xml(link)}</guid>`, `<link>${xml(link)}</link>`);
    out.push(`<pubDate>${new Date(s.created_at).toUTCString()}</pubDate>`);
    out.push(`<description>${xml(itemDescription(s))}</description>`);
    for (const m of s.media_attachments) {
      const url = m.url ?? m.remote_url;
      if (!url) continue;
      out.push(`<media:content url="${xml(url)}" type="${xml(mimeOf(m.type, url))}" medium="${medium(m.type)}">`);
      out.push(`<media:rating scheme="urn:simple">${s.sensitive ? 'adult' : 'nonadult'}</media:rating>`);
      if (m.description) out.push(`<media:description type="plain">${xml(m.description)}</media:description>`);
      if (m.preview_url) out.push(`<media:thumbnail url="${xml(m.preview_url)}"/>`);
      out.push('</media:content>');
    }
    for (const t of s.tags) out.push(`<category>${xml(t.name)}</category>`);
    out.push('</item>');
  }
  out.push('</channel>', '</rss>');
  return out.join('\n');
}

/** The attachment's content type from its kind and file extension (the entity carries no type). */
function mimeOf(type: string, url: string): string {
  const ext = /\.([a-z0-9]+)(?:\?|$)/i.exec(url)?.[1]?.toLowerCase() ?? '';
  const known: Record<string, string> = {
    png: 'image/png',
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    gif: 'image/gif',
    webp: 'image/webp',
    avif: 'image/avif',
    mp4: 'video/mp4',
    webm: 'video/webm',
    mp3: 'audio/mpeg',
    ogg: 'audio/ogg',
    m4a: 'audio/mp4',
  };
  return (
    known[ext] ??
    (type === 'image' ? 'image/jpeg' : type === 'gifv' || type === 'video' ? 'video/mp4' : 'application/octet-stream')
  );
}
