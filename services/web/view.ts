// Rendering a page: an Eta template beside its plugin (through @fastify/view), inside the one
// layout, with what every page needs (translations, the CSRF token, the instance name, who is
// signed in). Eta escapes every `<%= %>` value; `<%~ %>` (unescaped) is used only for the layout's body.
import { Eta } from 'eta';
import view from '@fastify/view';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { translator, catalogueLocale, type Translate } from './i18n.ts';

export const TEMPLATES_DIR = import.meta.dirname;

export async function registerView(app: FastifyInstance, production: boolean): Promise<void> {
  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true, autoTrim: [false, 'nl'] }) },
    templates: TEMPLATES_DIR,
    production,
  });
}

export interface PageOptions {
  status?: number;
  /** Template path below services/web, without `.eta` (e.g. `auth/sign_in`). */
  template: string;
  /** Catalogue key of the page title (the heading too, unless the template has its own). */
  title: string;
  titleVars?: Record<string, string>;
  lang?: string;
  instance: string;
  /** Username of whoever is signed in, for the navigation. */
  signedInAs?: string | null;
  csrf?: string;
  data?: Record<string, unknown>;
}

export interface PageData {
  t: Translate;
  lang: string;
  title: string;
  instance: string;
  signedInAs: string | null;
  csrf: string;
  [key: string]: unknown;
}

export async function page(reply: FastifyReply, opts: PageOptions): Promise<FastifyReply> {
  const lang = opts.lang ?? 'en';
  const t = translator(catalogueLocale(lang));
  const data: PageData = {
    ...(opts.data ?? {}),
    t,
    lang,
    title: t(opts.title, opts.titleVars),
    instance: opts.instance,
    signedInAs: opts.signedInAs ?? null,
    csrf: opts.csrf ?? '',
  };
  const html = await reply.viewAsync(`${opts.template}.eta`, data);
  return reply
    .code(opts.status ?? 200)
    .type('text/html; charset=utf-8')
    .send(html);
}

/** What the last submission of a page's form came to: its HTTP status, a notice or an error. */
export interface FormOutcome {
  status?: number;
  notice?: string;
  error?: string;
}

/** A page with a form: `page` with a fresh CSRF token and the form's last outcome (`notice`, `error`). */
export function formPage(
  reply: FastifyReply,
  opts: Omit<PageOptions, 'status' | 'csrf'>,
  outcome: FormOutcome = {},
): Promise<FastifyReply> {
  return page(reply, {
    ...opts,
    status: outcome.status,
    csrf: reply.generateCsrf(),
    data: { notice: outcome.notice ?? null, error: outcome.error ?? null, ...opts.data },
  });
}
