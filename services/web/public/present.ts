// Status and Account entities (as the API renders them) turned into what the public templates
// show. Content is the entity's HTML, already formatted (local) or sanitised on arrival (remote):
// it is shown as such and never built from unsanitised text; everything else is escaped, and
// custom emojis become images inside text only (never inside tags or attributes).
import type { Account } from '../../core/entities/account.ts';
import type { Status } from '../../core/entities/status.ts';
import { escapeHtml } from '../../core/text/formatStatus.ts';

interface Emoji {
  shortcode: string;
  url: string;
  static_url?: string;
}

/** `:shortcode:` in the text parts of `html` as images of the given emojis. */
export function emojify(html: string, emojis: readonly Emoji[]): string {
  if (emojis.length === 0 || !html.includes(':')) return html;
  const byCode = new Map(emojis.map((e) => [e.shortcode, e]));
  return html
    .split(/(<[^>]*>)/)
    .map((part) =>
      part.startsWith('<')
        ? part
        : part.replace(/:([a-zA-Z0-9_]{2,}):/g, (m, code: string) => {
            const e = byCode.get(code);
            if (!e) return m;
            const src = escapeHtml(e.static_url ?? e.url);
            return `<img class="emoji" src="${src}" alt=":${escapeHtml(code)}:" title=":${escapeHtml(code)}:" width="20" height="20">`;
          }),
    )
    .join('');
}

export function nameHtml(a: Pick<Account, 'display_name' | 'username' | 'emojis'>): string {
  return emojify(escapeHtml(a.display_name || a.username), a.emojis);
}

/** A local account's page or a remote account's page here (`/@user@domain`). */
export function profilePath(a: Pick<Account, 'acct'>): string {
  return `/@${a.acct}`;
}

/** Text of an HTML fragment, for descriptions and feeds' summaries. */
export function plainText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>\s*<p>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

export interface StatusView {
  id: string;
  /** Where the status is read here: its page for local ones, its origin for remote ones. */
  url: string;
  localPage: string | null;
  author: { nameHtml: string; acct: string; path: string; avatar: string };
  contentHtml: string;
  spoilerHtml: string;
  sensitive: boolean;
  createdAt: string;
  editedAt: string | null;
  language: string | null;
  media: {
    type: string;
    url: string;
    preview: string;
    alt: string | null;
    width: number | null;
    height: number | null;
  }[];
  poll: {
    expired: boolean;
    expiresAt: string | null;
    votesCount: number;
    votersCount: number | null;
    multiple: boolean;
    options: { titleHtml: string; votes: number | null; percent: number }[];
  } | null;
  card: {
    url: string;
    title: string;
    description: string;
    image: string | null;
    provider: string;
    alt: string;
  } | null;
  quote: StatusView | null;
  quoteState: string | null;
  counts: { replies: number; reblogs: number; favourites: number };
  visibility: string;
  inReplyTo: boolean;
  rebloggedBy: { nameHtml: string; path: string } | null;
  tags: string[];
}

/** The path of a local status page (local accounts' acct has no domain), or null for a remote status. */
function localPathOf(s: Pick<Status, 'id' | 'account'>): string | null {
  return s.account.acct.includes('@') ? null : `/@${s.account.acct}/${s.id}`;
}

export function statusView(raw: Status): StatusView {
  const boost = raw.reblog ? raw : null;
  const s = (raw.reblog ?? raw) as Status;
  const emojis = s.emojis;
  const localPage = localPathOf(s);
  const quoted = s.quote?.quoted_status ?? null;
  return {
    id: s.id,
    url: localPage ?? s.url ?? s.uri,
    localPage,
    author: {
      nameHtml: nameHtml(s.account),
      acct: s.account.acct,
      path: profilePath(s.account),
      avatar: s.account.avatar_static,
    },
    contentHtml: emojify(s.content ?? '', emojis),
    spoilerHtml: emojify(escapeHtml(s.spoiler_text), emojis),
    sensitive: s.sensitive,
    createdAt: s.created_at,
    editedAt: s.edited_at,
    language: s.language,
    media: s.media_attachments.map((m) => ({
      type: m.type,
      url: m.url ?? m.remote_url ?? '',
      preview: m.preview_url ?? m.url ?? '',
      alt: m.description,
      width: m.meta?.small?.width ?? null,
      height: m.meta?.small?.height ?? null,
    })),
    poll: s.poll
      ? {
          expired: s.poll.expired,
          expiresAt: s.poll.expires_at,
          votesCount: s.poll.votes_count,
          votersCount: s.poll.voters_count,
          multiple: s.poll.multiple,
          options: s.poll.options.map((o) => ({
            titleHtml: emojify(escapeHtml(o.title), s.poll?.emojis as unknown as Emoji[]),
            votes: o.votes_count,
            percent:
              o.votes_count === null || s.poll === null
                ? 0
                : Math.round(
                    (100 * o.votes_count) /
                      Math.max(1, s.poll.multiple ? (s.poll.voters_count ?? s.poll.votes_count) : s.poll.votes_count),
                  ),
          })),
        }
      : null,
    card: s.card
      ? {
          url: s.card.url,
          title: s.card.title,
          description: s.card.description,
          image: s.card.image ?? null,
          provider: s.card.provider_name || new URL(s.card.url).hostname,
          alt: s.card.image_description ?? '',
        }
      : null,
    quote: quoted ? statusView(quoted as unknown as Status) : null,
    quoteState: s.quote ? s.quote.state : null,
    counts: { replies: s.replies_count, reblogs: s.reblogs_count, favourites: s.favourites_count },
    visibility: s.visibility,
    inReplyTo: s.in_reply_to_id !== null,
    rebloggedBy: boost ? { nameHtml: nameHtml(boost.account), path: profilePath(boost.account) } : null,
    tags: s.tags.map((t) => t.name),
  };
}

/** The first image of a status (for link previews), or null. */
export function firstImage(
  s: StatusView,
): { url: string; alt: string | null; width: number | null; height: number | null } | null {
  const m = s.media.find((x) => x.type === 'image' || x.type === 'gifv');
  if (m) return { url: m.url, alt: m.alt, width: m.width, height: m.height };
  return null;
}
