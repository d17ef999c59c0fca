// Pages several page areas show: a message page, the log-in form, and the texts for users who may
// not log in.
import type { FastifyReply } from 'fastify';
import type { Core } from '../core/context.ts';
import type { LoginRefusal } from '../core/users/login.ts';
import { translator, type Translate } from './i18n.ts';
import { page } from './view.ts';

export function pageLang(value: unknown): string {
  return typeof value === 'string' && /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(value) ? value : 'en';
}

export function refusalMessage(t: Translate, refusal: LoginRefusal): string {
  return t(`auth.status.${refusal}`);
}

export interface MessageOptions {
  status?: number;
  /** Catalogue key of the title. */
  title: string;
  titleVars?: Record<string, string>;
  /** Paragraphs: catalogue keys when `translate`, else text as is. */
  lines: string[];
  translate?: boolean;
  link?: { href: string; label: string };
  lang?: string;
  signedInAs?: string | null;
  csrf?: string;
}

export function messagePage(reply: FastifyReply, core: Core, opts: MessageOptions): Promise<FastifyReply> {
  const t = translator(opts.lang);
  return page(reply, {
    status: opts.status,
    template: 'message',
    title: opts.title,
    titleVars: opts.titleVars,
    lang: opts.lang,
    instance: core.config.localDomain,
    signedInAs: opts.signedInAs,
    csrf: opts.csrf,
    data: {
      lines: opts.translate ? opts.lines.map((k) => t(k)) : opts.lines,
      link: opts.link ? { href: opts.link.href, label: t(opts.link.label) } : null,
    },
  });
}

/** The 404 page, for whoever is signed in (`signedInAs`) or a visitor. */
export function notFoundPage(reply: FastifyReply, core: Core, signedInAs?: string): Promise<FastifyReply> {
  return messagePage(reply, core, {
    status: 404,
    title: 'errors.title',
    lines: ['errors.not_found'],
    translate: true,
    ...(signedInAs ? { signedInAs, csrf: reply.generateCsrf() } : {}),
  });
}

const RETURNABLE =
  /^\/(oauth\/authorize(\?|$)|oauth\/authorized_applications$|auth\/edit$|settings\/[a-z_]+(\/[a-z_]+)?$|filters$|relationships(\?[a-z_=&]*)?$|blocks$|mutes$|domain_blocks$|followed_tags$)/;

/** Only our own pages may be returned to after log-in (no open redirect). */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > 4000 || value.includes('//') || value.includes('\\'))
    return DEFAULT_RETURN;
  return RETURNABLE.test(value) ? value : DEFAULT_RETURN;
}

/** Where a log-in not started by an app or a page leads: the account page. */
export const DEFAULT_RETURN = '/auth/edit';

/** The start of the external log-in, returning to `returnTo` afterwards. */
export function externalLoginPath(returnTo: string): string {
  return `/auth/auth/openid_connect?return_to=${encodeURIComponent(returnTo)}`;
}

export async function signInPage(
  reply: FastifyReply,
  core: Core,
  opts: { status?: number; returnTo: string; lang?: string; error?: string; notice?: string; email?: string },
): Promise<FastifyReply> {
  const oidc = core.config.oidc;
  // OMNIAUTH_ONLY with exactly one provider: log-in links lead straight to it (an app's OAuth flow too).
  if (core.config.omniauthOnly && oidc && !opts.error && !opts.notice)
    return reply.redirect(externalLoginPath(opts.returnTo), 303);
  return page(reply, {
    status: opts.status,
    template: 'auth/sign_in',
    title: 'auth.login',
    instance: core.config.localDomain,
    lang: opts.lang,
    csrf: reply.generateCsrf(),
    data: {
      returnTo: opts.returnTo,
      error: opts.error ?? null,
      notice: opts.notice ?? null,
      email: opts.email ?? '',
      passwordLogin: !core.config.omniauthOnly,
      external: oidc ? { name: oidc.displayName, href: externalLoginPath(opts.returnTo) } : null,
    },
  });
}
