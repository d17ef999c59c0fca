// Filters area: v2 filters with keywords and status entries, their keyword/status sub-resources
// (also under /api/v1/filters/keywords as the specification names them), and the deprecated v1
// filters (one per keyword). Every changing request publishes exactly one `filters_changed`.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { FilterDoc } from '../../core/model/filters.ts';
import {
  keywordAttributes,
  keywordText,
  parseAction,
  parseBool,
  parseContexts,
  parseExpiresIn,
} from '../../core/filters/changes.ts';
import {
  createFilter,
  deleteFilter,
  filterParts,
  filterTitle,
  listFilters,
  ownFilter as findOwnFilter,
  updateFilter,
  type FilterWithParts,
} from '../../core/filters/filters.ts';
import {
  addKeyword,
  addStatusEntry,
  changeKeyword,
  createV1Filter,
  keywordsOf,
  ownKeyword as findOwnKeyword,
  ownStatusEntry,
  ownV1Filter,
  removeKeyword,
  removeStatusEntry,
  statusEntriesOf,
  updateV1Filter,
  v1Filters,
} from '../../core/filters/entries.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound, validationFailed } from '../errors.ts';
import {
  FilterEntity,
  FilterKeywordEntity,
  FilterStatusEntity,
  V1FilterEntity,
  presentFilter,
  presentFilterStatus,
  presentKeyword,
  presentV1Filter,
} from '../../core/entities/filter.ts';
import { Empty, IdParams } from '../params.ts';
import { READ_FILTERS as READ, WRITE_FILTERS as WRITE } from '../scopes.ts';

const AnyBody = Type.Optional(Type.Object({}, { additionalProperties: true }));

type Body = Record<string, unknown> | undefined;

const filtersArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const ownFilter = (account: AccountDoc, raw: string) => findOwnFilter(core, account._id, parseId(raw));
  const ownKeyword = (account: AccountDoc, raw: string) => findOwnKeyword(core, account._id, parseId(raw));
  const present = (p: FilterWithParts) => presentFilter(p.filter, p.keywords, p.statuses);
  const render = async (f: FilterDoc) => present(await filterParts(core, f));

  // ---------------- v2 ----------------
  app.get(
    '/api/v2/filters',
    { schema: { response: { 200: Type.Array(FilterEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return (await listFilters(core, account._id)).map(present);
    },
  );

  app.get(
    '/api/v2/filters/:id',
    { schema: { params: IdParams, response: { 200: FilterEntity } }, config: { auth: READ } },
    async (request) => render(await ownFilter(requireUser(request).account, request.params.id)),
  );

  app.post(
    '/api/v2/filters',
    { schema: { body: AnyBody, response: { 200: FilterEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const b = (request.body ?? {}) as Body & object;
      const title = filterTitle(b.title);
      const context = parseContexts(b.context);
      const action = parseAction(b.filter_action, 'warn');
      const expiresAt = parseExpiresIn(b.expires_in);
      const attrs = keywordAttributes(b.keywords_attributes);
      if (attrs.some((a) => a.id !== undefined && a.id !== '')) throw notFound();
      const keywords = attrs.map((a) => ({
        keyword: keywordText(a.keyword),
        wholeWord: parseBool(a.whole_word, true),
      }));
      return render(await createFilter(core, account._id, { title, context, action, expiresAt, keywords }));
    },
  );

  app.put(
    '/api/v2/filters/:id',
    { schema: { params: IdParams, body: AnyBody, response: { 200: FilterEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const f = await ownFilter(account, request.params.id);
      const b = (request.body ?? {}) as Body & object;
      const set: Partial<FilterDoc> = {};
      if (b.title !== undefined) set.title = filterTitle(b.title);
      if (b.context !== undefined) set.context = parseContexts(b.context);
      if (b.filter_action !== undefined) set.action = parseAction(b.filter_action, f.action);
      if ('expires_in' in b) set.expiresAt = parseExpiresIn(b.expires_in);
      const changes = keywordAttributes(b.keywords_attributes).map((a) => {
        const hasId = a.id !== undefined && a.id !== '' && a.id !== null;
        const id = hasId ? parseId(a.id) : undefined;
        if (id === null) throw notFound();
        const destroy = parseBool(a._destroy, false);
        return {
          id,
          destroy,
          keyword: destroy || (a.keyword === undefined && hasId) ? undefined : keywordText(a.keyword),
          wholeWord:
            a.whole_word === undefined || a.whole_word === '' || a.whole_word === null
              ? undefined
              : parseBool(a.whole_word, true),
        };
      });
      return render(await updateFilter(core, f, set, changes));
    },
  );

  app.delete(
    '/api/v2/filters/:id',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await deleteFilter(core, await ownFilter(account, request.params.id));
      return {};
    },
  );

  // ---- keywords and status entries (v2; keyword paths also under v1) ----
  for (const [keywordsPath, keywordPath] of [
    ['/api/v2/filters/:id/keywords', '/api/v2/filters/keywords/:id'],
    ['/api/v1/filters/:id/keywords', '/api/v1/filters/keywords/:id'],
  ]) {
    app.get(
      keywordsPath,
      { schema: { params: IdParams, response: { 200: Type.Array(FilterKeywordEntity) } }, config: { auth: READ } },
      async (request) => {
        const f = await ownFilter(requireUser(request).account, request.params.id);
        return (await keywordsOf(core, f)).map(presentKeyword);
      },
    );
    app.post(
      keywordsPath,
      { schema: { params: IdParams, body: AnyBody, response: { 200: FilterKeywordEntity } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const f = await ownFilter(account, request.params.id);
        const b = (request.body ?? {}) as Body & object;
        return presentKeyword(await addKeyword(core, f, keywordText(b.keyword), parseBool(b.whole_word, true)));
      },
    );
    app.get(
      keywordPath,
      { schema: { params: IdParams, response: { 200: FilterKeywordEntity } }, config: { auth: READ } },
      async (request) => presentKeyword(await ownKeyword(requireUser(request).account, request.params.id)),
    );
    app.put(
      keywordPath,
      { schema: { params: IdParams, body: AnyBody, response: { 200: FilterKeywordEntity } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const k = await ownKeyword(account, request.params.id);
        const b = (request.body ?? {}) as Body & object;
        const keyword = b.keyword === undefined ? k.keyword : keywordText(b.keyword);
        const wholeWord = parseBool(b.whole_word, k.wholeWord);
        return presentKeyword(await changeKeyword(core, k, keyword, wholeWord));
      },
    );
    app.delete(
      keywordPath,
      { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        await removeKeyword(core, await ownKeyword(account, request.params.id));
        return {};
      },
    );
  }

  app.get(
    '/api/v2/filters/:id/statuses',
    { schema: { params: IdParams, response: { 200: Type.Array(FilterStatusEntity) } }, config: { auth: READ } },
    async (request) => {
      const f = await ownFilter(requireUser(request).account, request.params.id);
      return (await statusEntriesOf(core, f)).map(presentFilterStatus);
    },
  );
  app.post(
    '/api/v2/filters/:id/statuses',
    { schema: { params: IdParams, body: AnyBody, response: { 200: FilterStatusEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const f = await ownFilter(account, request.params.id);
      const b = (request.body ?? {}) as Body & object;
      if (b.status_id === undefined || b.status_id === '' || b.status_id === null)
        throw validationFailed("Status can't be blank");
      return presentFilterStatus(await addStatusEntry(core, f, parseId(b.status_id)));
    },
  );
  const ownEntry = (account: AccountDoc, raw: string) => ownStatusEntry(core, account._id, parseId(raw));
  app.get(
    '/api/v2/filters/statuses/:id',
    { schema: { params: IdParams, response: { 200: FilterStatusEntity } }, config: { auth: READ } },
    async (request) => presentFilterStatus(await ownEntry(requireUser(request).account, request.params.id)),
  );
  app.delete(
    '/api/v2/filters/statuses/:id',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await removeStatusEntry(core, await ownEntry(account, request.params.id));
      return {};
    },
  );

  // ---------------- v1 (one filter per keyword) ----------------
  const v1Of = (account: AccountDoc, raw: string) => ownV1Filter(core, account._id, parseId(raw));

  app.get(
    '/api/v1/filters',
    { schema: { response: { 200: Type.Array(V1FilterEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return (await v1Filters(core, account._id)).map(({ f, k }) => presentV1Filter(f, k));
    },
  );

  app.get(
    '/api/v1/filters/:id',
    { schema: { params: IdParams, response: { 200: V1FilterEntity } }, config: { auth: READ } },
    async (request) => {
      const { f, k } = await v1Of(requireUser(request).account, request.params.id);
      return presentV1Filter(f, k);
    },
  );

  app.post(
    '/api/v1/filters',
    { schema: { body: AnyBody, response: { 200: V1FilterEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const b = (request.body ?? {}) as Body & object;
      const phrase = typeof b.phrase === 'string' || typeof b.phrase === 'number' ? String(b.phrase).trim() : '';
      if (!phrase) throw validationFailed("Phrase can't be blank");
      if (phrase.length > 512) throw validationFailed('Phrase is too long');
      const { f, k } = await createV1Filter(core, account._id, {
        phrase,
        context: parseContexts(b.context),
        irreversible: parseBool(b.irreversible, false),
        expiresAt: parseExpiresIn(b.expires_in),
        wholeWord: parseBool(b.whole_word, true),
      });
      return presentV1Filter(f, k);
    },
  );

  app.put(
    '/api/v1/filters/:id',
    { schema: { params: IdParams, body: AnyBody, response: { 200: V1FilterEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const { f, k } = await v1Of(account, request.params.id);
      const b = (request.body ?? {}) as Body & object;
      const set: Partial<Pick<FilterDoc, 'context' | 'action' | 'expiresAt'>> = {};
      if (b.context !== undefined) set.context = parseContexts(b.context);
      if (b.irreversible !== undefined) set.action = parseBool(b.irreversible, false) ? 'hide' : 'warn';
      if ('expires_in' in b) set.expiresAt = parseExpiresIn(b.expires_in);
      const keyword = b.phrase === undefined ? k.keyword : keywordText(b.phrase);
      const wholeWord = parseBool(b.whole_word, k.wholeWord);
      const updated = await updateV1Filter(core, { f, k }, set, keyword, wholeWord);
      return presentV1Filter(updated.f, updated.k);
    },
  );

  app.delete(
    '/api/v1/filters/:id',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const { k } = await v1Of(account, request.params.id);
      await removeKeyword(core, k);
      return {};
    },
  );
};

export default filtersArea;
