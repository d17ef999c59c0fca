// What the public pages share: their caching headers (as Mastodon sets them), the route
// constraint that leaves ActivityPub requests to the federation routes, rendering inside the
// public layout with the link-preview meta, the not-found page, and a local status as a visitor
// may see it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { Account } from '../../core/entities/account.ts';
import type { Status } from '../../core/entities/status.ts';
import { wantsActivityJson } from '../../api/activitypub/index.ts';
import { instanceV2, termsOfService } from '../../core/instance/publicDocuments.ts';
import { page } from '../view.ts';
import { messagePage } from '../pages.ts';
import { translator, type Translate } from '../i18n.ts';
import { formatDate } from '../format.ts';
import { publicAccount, statusOf, visibleStatuses } from './reads.ts';
import { statusView, type StatusView } from './present.ts';

/** Mastodon's public pages: cached briefly by shared caches, varying with what changes them. */
export const PAGE_CACHE = 'public, max-age=15, stale-while-revalidate=30';
export const PAGE_VARY = 'Accept, Accept-Language, Cookie';
export const FEED_CACHE = 'public, max-age=60';

/** Route constraint: 'activity' when the request asks for ActivityPub JSON, else 'html'. */
export const PAGE_CONSTRAINT = {
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
export const HTML_ONLY = { constraints: { publicPage: 'html' } };

export type Meta = {
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

export type StatusParams = { Params: { username: string; id: string } };

export interface PublicKit {
  core: Core;
  base: string;
  t: Translate;
  view(
    reply: FastifyReply,
    template: string,
    title: string,
    data: Record<string, unknown>,
    meta: Meta,
    status?: number,
  ): Promise<FastifyReply>;
  notFoundPage(reply: FastifyReply, status?: number): Promise<FastifyReply>;
  localStatus(
    request: FastifyRequest<StatusParams>,
  ): Promise<{ owner: AccountDoc; status: StatusView; raw: Status } | 'gone' | null>;
  fullAcct(a: Pick<Account, 'acct'>): string;
}

export function publicKit(core: Core): PublicKit {
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

  function fullAcct(a: Pick<Account, 'acct'>): string {
    return a.acct.includes('@') ? a.acct : `${a.acct}@${core.config.localDomain}`;
  }

  return { core, base, t, view, notFoundPage, localStatus, fullAcct };
}
