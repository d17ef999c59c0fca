// The public pages a logged-out visitor reads (issue 27): landing (/), /about, /privacy-policy,
// /terms, profiles (/@user, /with_replies, /media, remote /@user@domain), statuses (/@user/ID with
// its thread, /embed for oEmbed), hashtags (/tags/NAME), the RSS feeds (/@user.rss,
// /tags/NAME.rss) and the remote-interaction dialog (…/interact). `/@user` and `/@user/ID` share
// their paths with the ActivityPub documents: a route constraint sends requests that ask for
// ActivityPub JSON (services/api/activitypub) there, unchanged, and every other request here.
// Each read is a core operation with no viewer (reads.ts): what a logged-out visitor may see
// through the API, nothing else.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { Account } from '../../core/entities/account.ts';
import type { Status } from '../../core/entities/status.ts';
import { normalizeDomain } from '../../core/moderation/domainBlocks.ts';
import { actorCollections, statusUri } from '../../core/activitypub/uris.ts';
import { escapeHtml } from '../../core/text/formatStatus.ts';
import { wantsActivityJson } from '../../api/activitypub/index.ts';
import {
  extendedDescription,
  instanceV1,
  instanceV2,
  moderatedServers,
  privacyPolicy,
  termsOfService,
} from '../../core/instance/publicDocuments.ts';
import { page } from '../view.ts';
import { messagePage } from '../pages.ts';
import { translator } from '../i18n.ts';
import { formatDate } from '../format.ts';
import {
  pageOf,
  PAGE_SIZE,
  pinnedStatuses,
  presentPublicAccount,
  profileStatuses,
  publicAccount,
  feedStatuses,
  statusOf,
  tagStatuses,
  thread,
  visibleStatuses,
  type ProfileTab,
} from './reads.ts';
import { emojify, firstImage, nameHtml, plainText, profilePath, statusView, type StatusView } from './present.ts';
import { renderRss } from './rss.ts';

/** Mastodon's public pages: cached briefly by shared caches, varying with what changes them. */
const PAGE_CACHE = 'public, max-age=15, stale-while-revalidate=30';
const PAGE_VARY = 'Accept, Accept-Language, Cookie';
const FEED_CACHE = 'public, max-age=60';

/** Route constraint: 'activity' when the request asks for ActivityPub JSON, else 'html'. */
const PAGE_CONSTRAINT = {
  name: 'publicPage',
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (value: string) => (handlers.get(value) ?? null) as never,
      set: (value: string, store: unknown) => void handlers.set(value, store),
    };
  },
  deriveConstraint: (req: { headers: Record<string, string | string[] | undefined> }) => {
    const accept = req.headers.accept;
    return wantsActivityJson(typeof accept === 'string' ? accept : undefined) ? 'activity' : 'html';
  },
  mustMatchWhenDerived: false,
};
const HTML_ONLY = { constraints: { publicPage: 'html' } };

type Meta = {
  robots: string;
  description?: string;
  canonical?: string;
  alternates?: { type: string; href: string; title?: string }[];
  og?: {
    siteName: string;
    type: string;
    title: string;
    url: string;
    description?: string;
    publishedTime?: string;
    profileUsername?: string;
    image?: { url: string; width?: number | null; height?: number | null; alt?: string | null } | null;
    twitterCard: string;
    author?: string;
  };
};

const publicPages: FastifyPluginAsync<{ core: Core }> = async (app, { core }) => {
  if (!app.hasConstraintStrategy(PAGE_CONSTRAINT.name)) app.addConstraintStrategy(PAGE_CONSTRAINT);
  const base = core.config.baseUrl;
  const t = translator('en');

  async function view(
    reply: FastifyReply,
    template: string,
    title: string,
    data: Record<string, unknown>,
    meta: Meta,
    status = 200,
  ): Promise<FastifyReply> {
    const [info, terms] = await Promise.all([instanceV2(core), termsOfService(core)]);
    reply.header('cache-control', PAGE_CACHE).header('vary', PAGE_VARY);
    return page(reply, {
      status,
      template: `public/${template}`,
      title: 'public.raw_title',
      titleVars: { title },
      instance: info.title,
      data: {
        ...data,
        meta,
        brandHref: '/',
        formatDate: (iso: string) => formatDate(new Date(iso)),
        hasTerms: terms !== null,
      },
    });
  }

  function notFoundPage(reply: FastifyReply, status = 404): Promise<FastifyReply> {
    return messagePage(reply, core, {
      status,
      title: 'errors.title',
      lines: [status === 410 ? 'public.gone' : 'errors.not_found'],
      translate: true,
    });
  }

  // ---- the server ----

  app.get('/', async (_request, reply) => {
    const [info, v1] = await Promise.all([instanceV2(core), instanceV1(core)]);
    return view(
      reply,
      'landing',
      info.title,
      { info, stats: v1.stats },
      {
        robots: 'all',
        description: info.description,
        og: {
          siteName: info.title,
          type: 'website',
          title: info.title,
          url: `${base}/`,
          description: info.description,
          image: { url: info.thumbnail.url },
          twitterCard: 'summary_large_image',
        },
      },
    );
  });

  app.get('/about', async (_request, reply) => {
    const [info, extended, servers] = await Promise.all([
      instanceV2(core),
      extendedDescription(core),
      moderatedServers(core, false),
    ]);
    const contactAccount = info.contact.account as Account | null;
    return view(
      reply,
      'about',
      t('public.about.title', { instance: info.title }),
      {
        info,
        extended: extended.content || null,
        servers,
        contact: contactAccount
          ? { nameHtml: nameHtml(contactAccount), acct: contactAccount.acct, path: profilePath(contactAccount) }
          : null,
      },
      { robots: 'all', description: info.description, canonical: `${base}/about` },
    );
  });

  app.get('/privacy-policy', async (_request, reply) => {
    const doc = await privacyPolicy(core);
    return view(
      reply,
      'document',
      t('public.footer.privacy'),
      { content: doc.content, updated: doc.updated_at?.slice(0, 10) ?? null },
      { robots: 'all' },
    );
  });

  const termsPage = async (_request: FastifyRequest, reply: FastifyReply) => {
    const doc = await termsOfService(core);
    if (!doc) return notFoundPage(reply);
    return view(
      reply,
      'document',
      t('public.footer.terms'),
      { content: doc.content, updated: doc.effective_date },
      { robots: 'all' },
    );
  };
  app.get('/terms', termsPage);
  app.get('/terms-of-service', termsPage);

  // ---- profiles ----

  type UserParams = { Params: { username: string }; Querystring: Record<string, string | undefined> };

  async function profile(request: FastifyRequest<UserParams>, reply: FastifyReply, tab: ProfileTab) {
    const acct = request.params.username;
    const owner = await publicAccount(core, acct);
    if (!owner) return notFoundPage(reply);
    const account = await presentPublicAccount(core, owner);
    const remote = owner.domain !== null;
    const path = `/@${account.acct}`;
    const moved = (account.moved ?? null) as Account | null;
    const limitedHidden = account.limited === true && request.query.show !== 'limited';
    const hidden = account.suspended === true || limitedHidden;
    const p = pageOf(request.query);
    const [pinned, list] = hidden
      ? [[], []]
      : await Promise.all([
          tab === 'posts' && p.maxId === null ? pinnedStatuses(core, owner) : Promise.resolve([] as Status[]),
          profileStatuses(core, owner, tab, p),
        ]);
    const here = `${path}${tab === 'posts' ? '' : `/${tab}`}`;
    const title = `${account.display_name || account.username} (@${fullAcct(account)})`;
    const c = remote ? null : actorCollections(core.config, owner.username);
    if (c) reply.header('link', `<${c.uri}>; rel="alternate"; type="application/activity+json"`);
    const description = plainText(account.note).slice(0, 500);
    return view(
      reply,
      'profile',
      title,
      {
        account,
        path,
        tab,
        remote,
        limitedHidden,
        fullAcct: fullAcct(account),
        nameHtml: nameHtml(account),
        noteHtml: emojify(account.note, account.emojis),
        fields: account.fields.map((f) => ({
          nameHtml: emojify(escapeHtml(f.name), account.emojis),
          valueHtml: emojify(f.value, account.emojis),
          verified: f.verified_at ? f.verified_at.slice(0, 10) : null,
        })),
        moved: moved ? { nameHtml: nameHtml(moved), acct: moved.acct, path: profilePath(moved) } : null,
        pinned: pinned.map(statusView),
        statuses: list.map(statusView),
        older: list.length >= PAGE_SIZE ? `${here}?max_id=${encodeURIComponent(list[list.length - 1].id)}` : null,
        newer: p.maxId !== null || p.minId !== null ? here : null,
      },
      {
        robots: remote || hidden || account.noindex ? 'noindex, noarchive' : 'all',
        description,
        canonical: remote ? (account.url ?? undefined) : `${base}${path}`,
        alternates: [
          ...(c ? [{ type: 'application/activity+json', href: c.uri }] : []),
          ...(remote || hidden ? [] : [{ type: 'application/rss+xml', href: `${base}${path}.rss` }]),
        ],
        og: hidden
          ? undefined
          : {
              siteName: (await instanceV2(core)).title,
              type: 'profile',
              title,
              url: remote ? (account.url ?? `${base}${path}`) : `${base}${path}`,
              description,
              profileUsername: fullAcct(account),
              image: { url: account.avatar, width: 400, height: 400 },
              twitterCard: 'summary',
            },
      },
    );
  }

  function fullAcct(a: Pick<Account, 'acct'>): string {
    return a.acct.includes('@') ? a.acct : `${a.acct}@${core.config.localDomain}`;
  }

  app.get<UserParams>('/@:username', HTML_ONLY, async (request, reply) => {
    const name = request.params.username;
    if (name.endsWith('.rss')) return accountFeed(reply, name.slice(0, -'.rss'.length), null);
    return profile(request, reply, 'posts');
  });
  app.get<UserParams>('/@:username/with_replies', async (request, reply) => profile(request, reply, 'with_replies'));
  app.get<UserParams>('/@:username/media', async (request, reply) => profile(request, reply, 'media'));
  app.get<{ Params: { username: string; tag: string } }>('/@:username/tagged/:tag', async (request, reply) => {
    const tag = request.params.tag;
    if (tag.endsWith('.rss')) return accountFeed(reply, request.params.username, tag.slice(0, -'.rss'.length));
    return reply.redirect(`/@${encodeURIComponent(request.params.username)}`, 302);
  });

  async function accountFeed(reply: FastifyReply, acct: string, tag: string | null) {
    const owner = await publicAccount(core, acct);
    // Feeds are served for local accounts only, as Mastodon (find_local!).
    if (!owner || owner.domain !== null) return notFoundPage(reply);
    if (owner.suspendedAt) return notFoundPage(reply, 410);
    const account = await presentPublicAccount(core, owner);
    const items = await feedStatuses(core, owner, tag);
    const link = tag ? `${base}/@${owner.username}/tagged/${encodeURIComponent(tag)}` : `${base}/@${owner.username}`;
    const xmlText = renderRss(
      {
        title: account.display_name || account.username,
        description: t('public.rss.account', { acct: fullAcct(account) }),
        link,
        image: account.avatar,
        generator: 'fedisrv',
      },
      items,
      (s) => `${base}/@${owner.username}/${s.id}`,
    );
    return reply
      .header('cache-control', FEED_CACHE)
      .header('vary', 'Accept, Accept-Language, Cookie')
      .type('application/rss+xml; charset=utf-8')
      .send(xmlText);
  }

  // ---- statuses ----

  type StatusParams = { Params: { username: string; id: string } };

  /** The status of a local account's page (remote statuses have their pages at their origin). */
  async function localStatus(
    request: FastifyRequest<StatusParams>,
  ): Promise<{ owner: AccountDoc; status: StatusView; raw: Status } | 'gone' | null> {
    const owner = await publicAccount(core, request.params.username);
    if (!owner || owner.domain !== null) return null;
    if (owner.suspendedAt) return 'gone';
    const doc = await statusOf(core, owner, request.params.id);
    if (!doc) return null;
    const [raw] = await visibleStatuses(core, [doc._id]);
    if (!raw) return null;
    return { owner, raw, status: statusView(raw) };
  }

  app.get<StatusParams>('/@:username/:id', HTML_ONLY, async (request, reply) => {
    const owner = await publicAccount(core, request.params.username);
    if (!owner || owner.domain !== null) return notFoundPage(reply);
    if (owner.suspendedAt) return notFoundPage(reply, 410);
    const doc = await statusOf(core, owner, request.params.id);
    const found = doc ? await thread(core, doc) : null;
    if (!doc || !found) return notFoundPage(reply);
    const s = statusView(found.status);
    const account = found.status.account;
    const url = `${base}/@${owner.username}/${doc._id}`;
    const uri = statusUri(core.config, owner.username, doc._id);
    const image = s.sensitive ? null : firstImage(s);
    const text = s.spoilerHtml ? plainText(s.spoilerHtml) : plainText(s.contentHtml);
    const description = [
      text.slice(0, 500),
      ...(found.status.poll ? found.status.poll.options.map((o) => `[ ] ${o.title}`) : []),
    ].join('\n');
    const author = `${account.display_name || account.username} (@${fullAcct(account)})`;
    reply.header('link', `<${uri}>; rel="alternate"; type="application/activity+json"`);
    return view(
      reply,
      'status_page',
      author,
      {
        status: s,
        ancestors: found.ancestors.map(statusView),
        descendants: found.descendants.map(statusView),
      },
      {
        robots: account.noindex ? 'noindex, noarchive' : 'all',
        description,
        canonical: url,
        alternates: [
          { type: 'application/activity+json', href: uri },
          {
            type: 'application/json+oembed',
            href: `${base}/api/oembed?format=json&url=${encodeURIComponent(url)}`,
          },
        ],
        og: {
          siteName: (await instanceV2(core)).title,
          type: 'article',
          title: author,
          url,
          description,
          publishedTime: found.status.created_at,
          image: image ?? { url: account.avatar, width: 400, height: 400 },
          twitterCard: image ? 'summary_large_image' : 'summary',
          author: `@${fullAcct(account)}`,
        },
      },
    );
  });

  // The page an oEmbed iframe shows: the status alone, framable by any site.
  app.get<StatusParams>('/@:username/:id/embed', async (request, reply) => {
    const found = await localStatus(request);
    if (found === 'gone') return notFoundPage(reply, 410);
    if (!found) return notFoundPage(reply);
    const info = await instanceV2(core);
    reply.removeHeader('x-frame-options');
    const html = await reply.viewAsync('public/embed.eta', {
      t,
      lang: 'en',
      title: `${found.raw.account.display_name || found.raw.account.username}: ${info.title}`,
      instance: info.title,
      status: found.status,
      formatDate: (iso: string) => formatDate(new Date(iso)),
    });
    return reply
      .header(
        'content-security-policy',
        "default-src 'none'; style-src 'self'; img-src 'self' data: https:; media-src 'self' https:; base-uri 'none'; frame-ancestors *",
      )
      .header('cache-control', 'public, max-age=180')
      .header('vary', PAGE_VARY)
      .type('text/html; charset=utf-8')
      .send(html);
  });

  // ---- remote interaction: the visitor names their account or server, and is sent there ----

  type InteractQuery = { type?: string; acct?: string };
  const INTERACTION_TITLES: Record<string, string> = {
    reply: 'public.interact.title_reply',
    reblog: 'public.interact.title_reblog',
    favourite: 'public.interact.title_favourite',
    follow: 'public.interact.title_follow',
  };
  const INTERACTIONS = Object.keys(INTERACTION_TITLES);

  async function interact(
    reply: FastifyReply,
    q: InteractQuery,
    target: { uri: string; back: string; action: string },
  ): Promise<FastifyReply> {
    const type = INTERACTIONS.includes(q.type ?? '') ? (q.type as string) : 'reply';
    const acct = (q.acct ?? '').trim();
    let error: string | null = null;
    if (acct) {
      const domain = normalizeDomain(acct.replace(/^@/, '').split('@').pop() ?? '');
      if (domain && domain.includes('.')) {
        // The visitor's server shows the post or account and lets them act on it (Mastodon's
        // authorize_interaction, the OStatus subscribe template of its WebFinger answer).
        return reply.redirect(`https://${domain}/authorize_interaction?uri=${encodeURIComponent(target.uri)}`, 303);
      }
      error = t('public.interact.invalid');
    }
    const info = await instanceV2(core);
    return page(reply, {
      status: error ? 422 : 200,
      template: 'public/interact',
      title: INTERACTION_TITLES[type],
      instance: info.title,
      data: { type, error, acct, back: target.back, action: target.action, brandHref: '/' },
    });
  }

  app.get<StatusParams & { Querystring: InteractQuery }>('/@:username/:id/interact', async (request, reply) => {
    const found = await localStatus(request);
    if (found === 'gone') return notFoundPage(reply, 410);
    if (!found) return notFoundPage(reply);
    return interact(reply, request.query, {
      uri: found.raw.uri,
      back: `/@${found.owner.username}/${found.raw.id}`,
      action: `/@${found.owner.username}/${found.raw.id}/interact`,
    });
  });
  app.get<UserParams & { Querystring: InteractQuery }>('/@:username/interact', async (request, reply) => {
    const owner = await publicAccount(core, request.params.username);
    if (!owner || owner.domain !== null) return notFoundPage(reply);
    if (owner.suspendedAt) return notFoundPage(reply, 410);
    return interact(
      reply,
      { ...request.query, type: 'follow' },
      {
        uri: actorCollections(core.config, owner.username).uri,
        back: `/@${owner.username}`,
        action: `/@${owner.username}/interact`,
      },
    );
  });

  // ---- hashtags ----

  app.get<{ Params: { name: string }; Querystring: Record<string, string | undefined> }>(
    '/tags/:name',
    async (request, reply) => {
      const raw = request.params.name;
      if (raw.endsWith('.rss')) return tagFeed(reply, raw.slice(0, -'.rss'.length));
      const p = pageOf(request.query);
      const list = await tagStatuses(core, raw, p);
      const here = `/tags/${encodeURIComponent(raw)}`;
      const info = await instanceV2(core);
      return view(
        reply,
        'tag',
        `#${raw}`,
        {
          tag: raw,
          statuses: list ? list.map(statusView) : null,
          older:
            list && list.length >= PAGE_SIZE ? `${here}?max_id=${encodeURIComponent(list[list.length - 1].id)}` : null,
          newer: p.maxId !== null ? here : null,
        },
        {
          robots: 'all',
          description: t('public.rss.tag', { tag: raw }),
          alternates: list ? [{ type: 'application/rss+xml', href: `${base}${here}.rss` }] : [],
          og: {
            siteName: info.title,
            type: 'website',
            title: `#${raw}`,
            url: `${base}${here}`,
            description: t('public.rss.tag', { tag: raw }),
            twitterCard: 'summary',
          },
        },
      );
    },
  );

  async function tagFeed(reply: FastifyReply, name: string) {
    const list = await tagStatuses(core, name, pageOf({}));
    if (list === null) return notFoundPage(reply);
    const xmlText = renderRss(
      {
        title: `#${name}`,
        description: t('public.rss.tag', { tag: name }),
        link: `${base}/tags/${encodeURIComponent(name)}`,
        image: null,
        generator: 'fedisrv',
      },
      list,
      (s) => (s.account.acct.includes('@') ? (s.url ?? s.uri) : `${base}/@${s.account.acct}/${s.id}`),
    );
    return reply
      .header('cache-control', FEED_CACHE)
      .header('vary', 'Accept, Accept-Language, Cookie')
      .type('application/rss+xml; charset=utf-8')
      .send(xmlText);
  }
};

export default publicPages;
