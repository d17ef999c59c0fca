// The RSS feeds of an account (/@user.rss, /@user/tagged/TAG.rss) and of a hashtag
// (/tags/NAME.rss), as Mastodon serves them: local accounts only, what a visitor may see.
import type { FastifyReply } from 'fastify';
import { feedStatuses, pageOf, presentPublicAccount, publicAccount, tagStatuses } from './reads.ts';
import { renderRss } from './rss.ts';
import { FEED_CACHE, type PublicKit } from './pageKit.ts';

export async function accountFeed(kit: PublicKit, reply: FastifyReply, acct: string, tag: string | null) {
  const { core, base, t, notFoundPage, fullAcct } = kit;
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

export async function tagFeed(kit: PublicKit, reply: FastifyReply, name: string) {
  const { core, base, t, notFoundPage } = kit;
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
