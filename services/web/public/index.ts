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
import type { Account } from '../../core/entities/account.ts';
import type { Status } from '../../core/entities/status.ts';
import { actorCollections, statusUri } from '../../core/activitypub/uris.ts';
import { escapeHtml } from '../../core/text/formatStatus.ts';
import {
  extendedDescription,
  instanceV1,
  instanceV2,
  moderatedServers,
  privacyPolicy,
  termsOfService,
} from '../../core/instance/publicDocuments.ts';
import { formatDate } from '../format.ts';
import {
  pageOf,
  PAGE_SIZE,
  pinnedStatuses,
  presentPublicAccount,
  profileStatuses,
  publicAccount,
  statusOf,
  tagStatuses,
  thread,
  type ProfileTab,
} from './reads.ts';
import { emojify, firstImage, nameHtml, plainText, profilePath, statusView } from './present.ts';
import { HTML_ONLY, PAGE_CONSTRAINT, PAGE_VARY, publicKit, type StatusParams } from './pageKit.ts';
import { accountFeed, tagFeed } from './feeds.ts';
import { interactPages } from './interact.ts';

const publicPages: FastifyPluginAsync<{ core: Core }> = async (app, { core }) => {
  if (!app.hasConstraintStrategy(PAGE_CONSTRAINT.name)) app.addConstraintStrategy(PAGE_CONSTRAINT);
  const kit = publicKit(core);
  const { base, t, view, notFoundPage, localStatus, fullAcct } = kit;
  interactPages(app, kit);

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

  app.get<UserParams>('/@:username', HTML_ONLY, async (request, reply) => {
    const name = request.params.username;
    if (name.endsWith('.rss')) return accountFeed(kit, reply, name.slice(0, -'.rss'.length), null);
    return profile(request, reply, 'posts');
  });
  app.get<UserParams>('/@:username/with_replies', async (request, reply) => profile(request, reply, 'with_replies'));
  app.get<UserParams>('/@:username/media', async (request, reply) => profile(request, reply, 'media'));
  app.get<{ Params: { username: string; tag: string } }>('/@:username/tagged/:tag', async (request, reply) => {
    const tag = request.params.tag;
    if (tag.endsWith('.rss')) return accountFeed(kit, reply, request.params.username, tag.slice(0, -'.rss'.length));
    return reply.redirect(`/@${encodeURIComponent(request.params.username)}`, 302);
  });

  // ---- statuses ----

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

  // ---- hashtags ----

  app.get<{ Params: { name: string }; Querystring: Record<string, string | undefined> }>(
    '/tags/:name',
    async (request, reply) => {
      const raw = request.params.name;
      if (raw.endsWith('.rss')) return tagFeed(kit, reply, raw.slice(0, -'.rss'.length));
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
};

export default publicPages;
