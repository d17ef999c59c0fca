// Keyword filters (/filters, /filters/new, /filters/:id/edit): list, create, change and delete
// the same v2 filters the API serves, through core/filters. Without JavaScript the form carries a
// few empty keyword rows; saving gives new empty rows.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { FILTER_CONTEXTS, type FilterAction, type FilterDoc } from '../../core/model/filters.ts';
import {
  createFilter,
  deleteFilter,
  filterParts,
  filterTitle,
  listFilters,
  ownFilter,
  updateFilter,
  type FilterWithParts,
  type KeywordChange,
} from '../../core/filters/filters.ts';
import { keywordText, parseAction, parseContexts, parseExpiresIn } from '../../core/filters/changes.ts';
import { ApiError } from '../../core/errors.ts';
import { parseId } from '../../core/ids.ts';
import { formCheckbox, formField } from '../forms.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { formatDate } from '../format.ts';
import { asSignedIn, requireSignedIn } from '../guard.ts';
import { notFoundPage } from '../pages.ts';

const t = translator('en');
const ACTIONS: FilterAction[] = ['warn', 'hide', 'blur'];
const DURATIONS = ['1800', '3600', '21600', '43200', '86400', '604800'];
/** Empty keyword rows offered on the form (more after saving). */
const BLANK_KEYWORDS = 3;
/** Keyword rows read from one form. */
const KEYWORD_ROWS_MAX = 200;

interface FormState {
  title: string;
  contexts: string[];
  action: FilterAction;
  expiresIn: string;
  keywords: Array<{ id: string; keyword: string; wholeWord: boolean }>;
}

const filterPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  function describe(f: FilterWithParts) {
    const now = Date.now();
    return {
      id: String(f.filter._id),
      title: f.filter.title,
      keywords: f.keywords.map((k) => k.keyword).join(', '),
      statuses: f.statuses.length,
      contexts: f.filter.context.map((c) => t(`data_settings.filters.contexts.${c}`)).join(', '),
      action: t(`data_settings.filters.actions.${f.filter.action}`),
      expiry: !f.filter.expiresAt
        ? t('data_settings.filters.never_expires')
        : f.filter.expiresAt.getTime() <= now
          ? t('data_settings.filters.expired')
          : t('data_settings.filters.expires_on', { date: formatDate(f.filter.expiresAt) }),
    };
  }

  async function indexPage(reply: FastifyReply, account: AccountDoc, notice?: string): Promise<FastifyReply> {
    const all = await listFilters(core, account._id);
    return page(reply, {
      template: 'filters/index',
      title: 'data_settings.filters.title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: { notice: notice ?? null, filters: all.map(describe) },
    });
  }

  function formPage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; error?: string; filter?: FilterDoc; form: FormState },
  ): Promise<FastifyReply> {
    const { form, filter } = opts;
    const rows = [
      ...form.keywords,
      ...Array.from({ length: BLANK_KEYWORDS }, () => ({ id: '', keyword: '', wholeWord: true })),
    ];
    return page(reply, {
      status: opts.status,
      template: 'filters/form',
      title: filter ? 'data_settings.filters.edit_title' : 'data_settings.filters.new_title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        error: opts.error ?? null,
        action: filter ? `/filters/${filter._id}` : '/filters',
        submit: t(filter ? 'data_settings.filters.save' : 'data_settings.filters.save_new'),
        filterTitle: form.title,
        contexts: FILTER_CONTEXTS.map((c) => ({
          value: c,
          label: t(`data_settings.filters.contexts.${c}`),
          checked: form.contexts.includes(c),
        })),
        actions: ACTIONS.map((a) => ({
          value: a,
          label: t(`data_settings.filters.actions.${a}`),
          checked: a === form.action,
        })),
        durations: [
          ...(filter?.expiresAt && filter.expiresAt.getTime() > Date.now()
            ? [
                {
                  value: 'keep',
                  label: t('data_settings.filters.expires_keep', { date: formatDate(filter.expiresAt) }),
                },
              ]
            : []),
          { value: '', label: t('data_settings.filters.never') },
          ...DURATIONS.map((d) => ({ value: d, label: t(`data_settings.filters.durations.${d}`) })),
        ].map((o) => ({ ...o, selected: o.value === form.expiresIn })),
        keywords: rows.map((k, i) => ({ ...k, n: i + 1, i })),
      },
    });
  }

  /** How many keyword rows the form sent (rows 0..n-1, each with its `keyword_i` field). */
  function keywordRows(request: FastifyRequest): number {
    const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    let n = 0;
    while (n < KEYWORD_ROWS_MAX && `keyword_${n}` in body) n++;
    return n;
  }

  /** The form as submitted (for showing it again with an error). */
  function readForm(request: FastifyRequest): FormState {
    const keywords: FormState['keywords'] = [];
    for (let i = 0; i < keywordRows(request); i++) {
      const keyword = formField(request, `keyword_${i}`, 600);
      const id = formField(request, `keyword_id_${i}`, 30);
      if ((keyword === '' && id === '') || formCheckbox(request, `keyword_destroy_${i}`)) continue;
      keywords.push({ id, keyword, wholeWord: formCheckbox(request, `whole_word_${i}`) });
    }
    const action = formField(request, 'filter_action', 10);
    return {
      title: formField(request, 'title', 300),
      contexts: FILTER_CONTEXTS.filter((c) => formCheckbox(request, `context_${c}`)),
      action: (ACTIONS as string[]).includes(action) ? (action as FilterAction) : 'warn',
      expiresIn: formField(request, 'expires_in', 20),
      keywords,
    };
  }

  /** Keyword rows as changes: an emptied or ticked existing keyword is removed, a filled blank row added. */
  function keywordChanges(request: FastifyRequest, existing: Set<string>): KeywordChange[] {
    const changes: KeywordChange[] = [];
    for (let i = 0; i < keywordRows(request); i++) {
      const raw = formField(request, `keyword_${i}`, 600);
      const idText = formField(request, `keyword_id_${i}`, 30);
      const id = idText && existing.has(idText) ? (parseId(idText) ?? undefined) : undefined;
      if (id === undefined && raw.trim() === '') continue;
      if (id !== undefined && (formCheckbox(request, `keyword_destroy_${i}`) || raw.trim() === '')) {
        changes.push({ id, destroy: true });
        continue;
      }
      changes.push({ id, keyword: keywordText(raw), wholeWord: formCheckbox(request, `whole_word_${i}`) });
    }
    return changes;
  }

  async function signedInFilter(
    request: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
    path: string,
  ) {
    const signedIn = await requireSignedIn(core, request, reply, path);
    if (!signedIn) return null;
    try {
      const filter = await ownFilter(core, signedIn.account._id, parseId(request.params.id));
      return { ...signedIn, filter };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      await notFoundPage(reply, core, signedIn.account.username);
      return null;
    }
  }

  const cleanError = (err: ApiError) => err.message.replace(/^Validation failed: /, '');

  app.get(
    '/filters',
    asSignedIn(core, '/filters', (request, reply, signedIn) => indexPage(reply, signedIn.account)),
  );

  app.get(
    '/filters/new',
    asSignedIn(core, '/filters', (request, reply, signedIn) =>
      formPage(reply, signedIn.account, {
        form: { title: '', contexts: [], action: 'warn', expiresIn: '', keywords: [] },
      }),
    ),
  );

  app.post(
    '/filters',
    { preHandler: app.csrfProtection },
    asSignedIn(core, '/filters', async (request, reply, signedIn) => {
      const form = readForm(request);
      try {
        const changes = keywordChanges(request, new Set());
        await createFilter(core, signedIn.account._id, {
          title: filterTitle(form.title),
          context: parseContexts(form.contexts),
          action: parseAction(form.action, 'warn'),
          expiresAt: parseExpiresIn(form.expiresIn),
          keywords: changes.map((c) => ({ keyword: c.keyword ?? '', wholeWord: c.wholeWord ?? true })),
        });
        return indexPage(reply, signedIn.account, t('data_settings.filters.created'));
      } catch (err) {
        if (err instanceof ApiError)
          return formPage(reply, signedIn.account, { status: 422, error: cleanError(err), form });
        throw err;
      }
    }),
  );

  app.get<{ Params: { id: string } }>('/filters/:id/edit', async (request, reply) => {
    const found = await signedInFilter(request, reply, '/filters');
    if (!found) return reply;
    const { filter, keywords } = await filterParts(core, found.filter);
    return formPage(reply, found.account, {
      filter,
      form: {
        title: filter.title,
        contexts: filter.context,
        action: filter.action,
        expiresIn: filter.expiresAt && filter.expiresAt.getTime() > Date.now() ? 'keep' : '',
        keywords: keywords.map((k) => ({ id: String(k._id), keyword: k.keyword, wholeWord: k.wholeWord })),
      },
    });
  });

  // PUT and DELETE /filters/:id in Mastodon; a form posts them, deleting with `_method=delete`.
  app.post<{ Params: { id: string } }>('/filters/:id', { preHandler: app.csrfProtection }, async (request, reply) => {
    const found = await signedInFilter(request, reply, '/filters');
    if (!found) return reply;
    const { account, filter } = found;
    if (formField(request, '_method', 10).toLowerCase() === 'delete') {
      await deleteFilter(core, filter);
      return indexPage(reply, account, t('data_settings.filters.deleted'));
    }
    const form = readForm(request);
    try {
      const { keywords } = await filterParts(core, filter);
      const changes = keywordChanges(request, new Set(keywords.map((k) => String(k._id))));
      await updateFilter(
        core,
        filter,
        {
          title: filterTitle(form.title),
          context: parseContexts(form.contexts),
          action: parseAction(form.action, filter.action),
          ...(form.expiresIn === 'keep' ? {} : { expiresAt: parseExpiresIn(form.expiresIn) }),
        },
        changes,
      );
      return indexPage(reply, account, t('data_settings.filters.updated'));
    } catch (err) {
      if (err instanceof ApiError)
        return formPage(reply, account, { status: 422, error: cleanError(err), filter, form });
      throw err;
    }
  });
};

export default filterPages;
