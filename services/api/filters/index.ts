// Filters area: v2 filters with keywords and status entries, their keyword/status sub-resources
// (also under /api/v1/filters/keywords as the specification names them), and the deprecated v1
// filters (one per keyword). Every changing request publishes exactly one `filters_changed`.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { nextSerialId, parseId, type Id } from '../../core/ids.ts';
import { collection } from '../../core/db/mongo.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { statuses } from '../../core/model/statuses.ts';
import {
  filterKeywords,
  filterStatuses,
  filters,
  type FilterDoc,
  type FilterKeywordDoc,
} from '../../core/model/filters.ts';
import {
  keywordAttributes,
  keywordText,
  parseAction,
  parseBool,
  parseContexts,
  parseExpiresIn,
  publishFiltersChanged,
} from '../../core/filters/changes.ts';
import { addFilterKeyword, createFilter, deleteFilter, filterTitle, updateFilter } from '../../core/filters/filters.ts';
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

const READ = { scopes: ['read', 'read:filters'], user: 'required' as const };
const WRITE = { scopes: ['write', 'write:filters'], user: 'required' as const };
const AnyBody = Type.Optional(Type.Object({}, { additionalProperties: true }));

type Body = Record<string, unknown> | undefined;

const filtersArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const F = () => collection(core.db, filters);
  const K = () => collection(core.db, filterKeywords);
  const S = () => collection(core.db, filterStatuses);

  async function ownFilter(account: AccountDoc, raw: string): Promise<FilterDoc> {
    const id = parseId(raw);
    const f = id === null ? null : await F().findOne({ _id: id, accountId: account._id });
    if (!f) throw notFound();
    return f;
  }
  async function ownKeyword(account: AccountDoc, raw: string): Promise<FilterKeywordDoc> {
    const id = parseId(raw);
    const k = id === null ? null : await K().findOne({ _id: id, accountId: account._id });
    if (!k) throw notFound();
    return k;
  }
  async function render(f: FilterDoc) {
    const [kws, sts] = await Promise.all([
      K().find({ filterId: f._id }).sort({ _id: 1 }).toArray(),
      S().find({ filterId: f._id }).sort({ _id: 1 }).toArray(),
    ]);
    return presentFilter(f, kws, sts);
  }
  const addKeyword = (f: FilterDoc, keyword: string, wholeWord: boolean) =>
    addFilterKeyword(core, f, keyword, wholeWord);
  const changed = (account: AccountDoc) => publishFiltersChanged(core, account._id);

  // ---------------- v2 ----------------
  app.get(
    '/api/v2/filters',
    { schema: { response: { 200: Type.Array(FilterEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const fs = await F().find({ accountId: account._id }).sort({ _id: 1 }).toArray();
      return Promise.all(fs.map(render));
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
        return (await K().find({ filterId: f._id }).sort({ _id: 1 }).toArray()).map(presentKeyword);
      },
    );
    app.post(
      keywordsPath,
      { schema: { params: IdParams, body: AnyBody, response: { 200: FilterKeywordEntity } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const f = await ownFilter(account, request.params.id);
        const b = (request.body ?? {}) as Body & object;
        const k = await addKeyword(f, keywordText(b.keyword), parseBool(b.whole_word, true));
        await changed(account);
        return presentKeyword(k);
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
        await K().updateOne({ _id: k._id }, { $set: { keyword, wholeWord } });
        await changed(account);
        return presentKeyword({ ...k, keyword, wholeWord });
      },
    );
    app.delete(
      keywordPath,
      { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const k = await ownKeyword(account, request.params.id);
        await K().deleteOne({ _id: k._id });
        await changed(account);
        return {};
      },
    );
  }

  app.get(
    '/api/v2/filters/:id/statuses',
    { schema: { params: IdParams, response: { 200: Type.Array(FilterStatusEntity) } }, config: { auth: READ } },
    async (request) => {
      const f = await ownFilter(requireUser(request).account, request.params.id);
      return (await S().find({ filterId: f._id }).sort({ _id: 1 }).toArray()).map(presentFilterStatus);
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
      const statusId = parseId(b.status_id);
      const status =
        statusId === null ? null : await collection(core.db, statuses).findOne({ _id: statusId, deletedAt: null });
      if (!status) throw notFound();
      const existing = await S().findOne({ filterId: f._id, statusId: status._id });
      if (existing) throw validationFailed('Status has already been taken');
      const doc = {
        _id: await nextSerialId(core.db, 'filter_statuses'),
        filterId: f._id,
        accountId: account._id,
        statusId: status._id,
        createdAt: new Date(),
      };
      await S().insertOne(doc);
      await changed(account);
      return presentFilterStatus(doc);
    },
  );
  const ownEntry = async (account: AccountDoc, raw: string) => {
    const id = parseId(raw);
    const s = id === null ? null : await S().findOne({ _id: id, accountId: account._id });
    if (!s) throw notFound();
    return s;
  };
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
      const s = await ownEntry(account, request.params.id);
      await S().deleteOne({ _id: s._id });
      await changed(account);
      return {};
    },
  );

  // ---------------- v1 (one filter per keyword) ----------------
  async function v1Of(account: AccountDoc, raw: string): Promise<{ f: FilterDoc; k: FilterKeywordDoc }> {
    const k = await ownKeyword(account, raw);
    const f = await F().findOne({ _id: k.filterId });
    if (!f) throw notFound();
    return { f, k };
  }

  app.get(
    '/api/v1/filters',
    { schema: { response: { 200: Type.Array(V1FilterEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const [fs, ks] = await Promise.all([
        F().find({ accountId: account._id }).toArray(),
        K().find({ accountId: account._id }).sort({ _id: 1 }).toArray(),
      ]);
      const byId = new Map<Id, FilterDoc>(fs.map((f) => [f._id, f]));
      return ks.filter((k) => byId.has(k.filterId)).map((k) => presentV1Filter(byId.get(k.filterId) as FilterDoc, k));
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
      const context = parseContexts(b.context);
      const expiresAt = parseExpiresIn(b.expires_in);
      const now = new Date();
      const f: FilterDoc = {
        _id: await nextSerialId(core.db, 'filters'),
        accountId: account._id,
        title: phrase,
        context,
        action: parseBool(b.irreversible, false) ? 'hide' : 'warn',
        expiresAt,
        createdAt: now,
        updatedAt: now,
      };
      await F().insertOne(f);
      const k = await addKeyword(f, phrase, parseBool(b.whole_word, true));
      await changed(account);
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
      const set: Partial<FilterDoc> = { updatedAt: new Date() };
      if (b.context !== undefined) set.context = parseContexts(b.context);
      if (b.irreversible !== undefined) set.action = parseBool(b.irreversible, false) ? 'hide' : 'warn';
      if ('expires_in' in b) set.expiresAt = parseExpiresIn(b.expires_in);
      const keyword = b.phrase === undefined ? k.keyword : keywordText(b.phrase);
      const wholeWord = parseBool(b.whole_word, k.wholeWord);
      const changesFilter = set.context !== undefined || set.action !== undefined || set.expiresAt !== undefined;
      if (changesFilter && (await K().countDocuments({ filterId: f._id })) > 1)
        throw validationFailed('Cannot change context, irreversible or expiry of a filter with several keywords');
      await F().updateOne({ _id: f._id }, { $set: set });
      await K().updateOne({ _id: k._id }, { $set: { keyword, wholeWord } });
      await changed(account);
      return presentV1Filter({ ...f, ...set }, { ...k, keyword, wholeWord });
    },
  );

  app.delete(
    '/api/v1/filters/:id',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const { k } = await v1Of(account, request.params.id);
      await K().deleteOne({ _id: k._id });
      await changed(account);
      return {};
    },
  );
};

export default filtersArea;
