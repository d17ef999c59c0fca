// Timelines: home and list (from the feeds the fan-out pipeline keeps in Redis; a missing home
// feed is rebuilt from MongoDB on read), public (`local`, `remote`, `only_media`) and hashtag
// (`any[]`, `all[]`, `none[]`, `local`, `remote`, `only_media`), with max/since/min_id and Link
// headers, each status checked for the viewer and rendered with the viewer's flags; link (statuses
// sharing a trending link).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Filter } from 'mongodb';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../core/model/statuses.ts';
import { feedKey, feedPage } from '../../core/feeds/feeds.ts';
import { readHomeFeed } from '../../core/feeds/maintenance.ts';
import { ownList } from '../../core/lists/lists.ts';
import { normalizeTagName } from '../../core/text/extract.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { requireUser, roleOfRequest } from '../plugins/auth.ts';
import { ApiError, notFound } from '../errors.ts';
import { discoverableStatusIds, linkedStatusIds, trendingCard } from '../../core/trends/linkTimeline.ts';
import { hasPermission } from '../../core/roles/permissions.ts';
import { feedOrigin, getFeedAccess, requiresLogin, type FeedKind } from '../../core/settings/feedAccess.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import type { PageOptions } from '../../core/entities/statusPage.ts';
import { presentStatusPageJson } from '../../core/entities/statusPageJson.ts';
import { BoolLike, CursorFields, CursorQuery } from '../params.ts';
import { pageParams, setCursorPageLinks, type PageParams } from '../pagination.ts';
import { pageIdsOf } from '../../core/db/pages.ts';
import { READ_STATUSES as READ, READ_STATUSES_PUBLIC as PUBLIC } from '../scopes.ts';

const Scope = {
  local: Type.Optional(BoolLike),
  remote: Type.Optional(BoolLike),
  only_media: Type.Optional(BoolLike),
};
const TagList = Type.Optional(
  Type.Union([Type.Array(Type.String({ maxLength: 300 }), { maxItems: 10 }), Type.String({ maxLength: 300 })]),
);

function page(query: unknown): PageParams {
  return pageParams(query, { defaultLimit: 20, maxLimit: 40 });
}

async function answer(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  p: PageParams,
  ids: Id[],
  viewer: CachedAccount | null,
  check: PageOptions['check'],
) {
  setCursorPageLinks(core, request, reply, ids, p.limit);
  // Public and hashtag feeds leave out silenced authors the viewer does not follow.
  const page = await presentStatusPageJson(core, ids, viewer, { check, hideLimited: check === 'policy' });
  // Built exactly to the Status schema and spliced from cached JSON (statusPageJson.ts), so sent
  // as it is: fast-json-stringify's per-field union checks cost more than the rest of the rendering.
  return reply.type('application/json; charset=utf-8').send(page);
}

/** The ids of a page of statuses matching `filter`, newest first (the newest page kept a moment). */
function pageIds(core: Core, filter: Filter<StatusDoc>, p: PageParams): Promise<Id[]> {
  return pageIdsOf(core.db, statuses, filter, p);
}

/**
 * The public or hashtag feed filter for this caller: the origin the instance's feed access
 * settings let the caller read (422 for a logged-out caller when the feed asked for is not public,
 * as Mastodon's require_user!), `only_media`, and the user's chosen languages (rule 9).
 * null when nothing may be shown.
 */
async function publicFeedFilter(
  core: Core,
  request: FastifyRequest,
  kind: FeedKind,
  base: Filter<StatusDoc>,
  q: { local?: unknown; remote?: unknown; only_media?: unknown },
): Promise<Filter<StatusDoc> | null> {
  const wanted = { local: railsBoolean(q.local) === true, remote: railsBoolean(q.remote) === true };
  const pair = (await getFeedAccess(core))[kind];
  const auth = request.auth;
  if (!auth?.user && requiresLogin(pair, wanted)) throw new ApiError(422, 'This method requires an authenticated user');
  const someDisabled = pair.local === 'disabled' || pair.remote === 'disabled';
  const reader = {
    user: auth?.user != null,
    viewFeeds:
      someDisabled && auth?.user != null && hasPermission((await roleOfRequest(request)).permissions, 'view_feeds'),
  };
  const origin = feedOrigin(pair, reader, wanted);
  if (origin === 'none') return null;
  const out = { ...base };
  if (origin === 'local') out.local = true;
  else if (origin === 'remote') out.local = false;
  if (railsBoolean(q.only_media)) out['mediaIds.0'] = { $exists: true };
  const languages = auth?.user?.settings.chosenLanguages;
  if (languages && languages.length > 0) out.language = { $in: languages };
  return out;
}

/**
 * A public, hashtag or link timeline: the page of statuses `pick` finds under the feed filter for
 * this caller (`base` narrowed by publicFeedFilter), or an empty page when the caller may see none.
 */
async function publicTimeline(
  core: Core,
  request: FastifyRequest & { query: { local?: unknown; remote?: unknown; only_media?: unknown } },
  reply: FastifyReply,
  kind: FeedKind,
  base: Filter<StatusDoc>,
  pick: (filter: Filter<StatusDoc>, p: PageParams) => Promise<Id[]>,
) {
  const viewer = request.auth?.account ?? null;
  const p = page(request.query);
  const filter = await publicFeedFilter(core, request, kind, base, request.query);
  const ids = filter === null ? [] : await pick(filter, p);
  return answer(core, request, reply, p, ids, viewer, 'policy');
}

function tagNames(raw: string | string[] | undefined): string[] {
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((t) => normalizeTagName(t.trim().replace(/^#/, ''))).filter(Boolean);
}

const timelinesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/timelines/home',
    {
      schema: {
        querystring: CursorQuery,
        response: { 200: Type.Array(StatusEntity) },
      },
      config: { auth: READ },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = page(request.query);
      const ids = await readHomeFeed(core, account._id, p);
      return answer(core, request, reply, p, ids, account, 'feed');
    },
  );

  app.get(
    '/api/v1/timelines/list/:id',
    {
      schema: {
        params: Type.Object({ id: Type.String({ maxLength: 30 }) }),
        querystring: CursorQuery,
        response: { 200: Type.Array(StatusEntity) },
      },
      config: { auth: { scopes: ['read', 'read:lists'], user: 'required' } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const list = await ownList(core, account, parseId(request.params.id));
      const p = page(request.query);
      return answer(core, request, reply, p, await feedPage(core.redis, feedKey('list', list._id), p), account, 'feed');
    },
  );

  app.get(
    '/api/v1/timelines/public',
    {
      schema: {
        querystring: Type.Object({ ...CursorFields, ...Scope }, { additionalProperties: true }),
        response: { 200: Type.Array(StatusEntity) },
      },
      config: { auth: PUBLIC },
    },
    async (request, reply) =>
      publicTimeline(
        core,
        request,
        reply,
        'live',
        { visibility: 'public', reblogOfId: null, inReplyToId: null, deletedAt: null },
        (filter, p) => pageIds(core, filter, p),
      ),
  );

  app.get(
    '/api/v1/timelines/tag/:hashtag',
    {
      schema: {
        params: Type.Object({ hashtag: Type.String({ maxLength: 300 }) }),
        querystring: Type.Object(
          { ...CursorFields, ...Scope, any: TagList, all: TagList, none: TagList },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(StatusEntity) },
      },
      config: { auth: PUBLIC },
    },
    async (request, reply) => {
      const q = request.query;
      const main = tagNames(request.params.hashtag);
      if (main.length === 0) return [];
      const anyOf = [...main, ...tagNames(q.any)];
      const all = tagNames(q.all);
      const none = tagNames(q.none);
      const base: Filter<StatusDoc> = { visibility: 'public', reblogOfId: null, deletedAt: null };
      return publicTimeline(core, request, reply, 'topic', base, (filter, p) => {
        filter.tagNames = anyOf.length === 1 ? anyOf[0] : { $in: anyOf };
        const extra: Filter<StatusDoc>[] = [];
        if (all.length > 0) extra.push({ tagNames: { $all: all } });
        if (none.length > 0) extra.push({ tagNames: { $nin: none } });
        return pageIds(core, extra.length > 0 ? { ...filter, $and: extra } : filter, p);
      });
    },
  );

  app.get(
    '/api/v1/timelines/link',
    {
      schema: {
        querystring: Type.Object(
          { ...CursorFields, ...Scope, url: Type.Optional(Type.String({ maxLength: 2048 })) },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(StatusEntity) },
      },
      config: { auth: PUBLIC },
    },
    async (request, reply) => {
      // Mastodon 4.3+: public statuses of discoverable authors sharing a trending link (404 when
      // the link is not trending); the hashtag ("topic") feed access settings apply.
      const q = request.query;
      const card = q.url ? await trendingCard(core, q.url) : null;
      if (!card) throw notFound();
      const linked = await linkedStatusIds(core, card);
      const base: Filter<StatusDoc> = { visibility: 'public', reblogOfId: null, deletedAt: null };
      base.$and = [{ _id: { $in: linked } }];
      return publicTimeline(core, request, reply, 'topic', base, async (filter, p) =>
        linked.length === 0 ? [] : discoverableStatusIds(core, filter, p),
      );
    },
  );
};

export default timelinesArea;
