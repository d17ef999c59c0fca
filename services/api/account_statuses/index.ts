// GET /api/v1/accounts/:id/statuses: an account's statuses, readable without login (rule 4), each
// checked against the caller: followers-only posts for followers, nothing for blocked callers.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { presentStatusPageJson } from '../../core/entities/statusPageJson.ts';
import type { AreaOptions } from '../areas.ts';
import { statuses, type StatusDoc, type Visibility } from '../../core/model/statuses.ts';
import { pinnedStatusesPage } from '../../core/interactions/pins.ts';
import { blockersOf, filterVisible, followedAmongKept } from '../../core/statuses/visibility.ts';
import { accountStatusesFilter, PUBLIC_LISTED } from '../../core/statuses/accountStatuses.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { BoolLike, CursorFields } from '../params.ts';
import { pageParams, setCursorPageLinks, setRecordPageLinks } from '../pagination.ts';
import { pageIdsOf } from '../../core/db/pages.ts';
import { AccountIdParams, targetCachedAccount } from '../graphParams.ts';

const Query = Type.Object(
  {
    ...CursorFields,
    pinned: Type.Optional(BoolLike),
    tagged: Type.Optional(Type.String({ maxLength: 300 })),
    exclude_reblogs: Type.Optional(BoolLike),
    exclude_replies: Type.Optional(BoolLike),
    only_media: Type.Optional(BoolLike),
  },
  { additionalProperties: true },
);

const accountStatusesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/accounts/:id/statuses',
    {
      schema: { params: AccountIdParams, querystring: Query, response: { 200: Type.Array(StatusEntity) } },
      config: { auth: { scopes: ['read', 'read:statuses'], user: 'optional' } },
    },
    async (request, reply) => {
      const viewer = request.auth?.account ?? null;
      // The account and whom the viewer follows from the caches (a profile read costs no MongoDB query).
      const owner = await targetCachedAccount(core, request.params.id);
      const q = request.query;
      if (viewer && viewer._id !== owner._id && (await blockersOf(core, viewer._id)).has(owner._id)) return [];
      const page = pageParams(q, { defaultLimit: 20, maxLimit: 40 });

      let visibilities: Visibility[] | null = null;
      if (!viewer || viewer._id !== owner._id) {
        const follower = viewer !== null && (await followedAmongKept(core, viewer._id, [owner._id])).has(owner._id);
        visibilities = follower ? ['public', 'unlisted', 'private'] : PUBLIC_LISTED;
      }
      const filter = accountStatusesFilter(owner._id, {
        visibilities,
        excludeReblogs: railsBoolean(q.exclude_reblogs) === true,
        excludeReplies: railsBoolean(q.exclude_replies) === true,
        onlyMedia: railsBoolean(q.only_media) === true,
        tagged: q.tagged,
      });

      let found: StatusDoc[];
      if (railsBoolean(q.pinned)) {
        const pinned = await pinnedStatusesPage(core, owner._id, filter, page);
        found = pinned.statuses;
        setRecordPageLinks(core, request, reply, pinned.pins, page.limit, 'min_id');
      } else {
        const ids = await pageIdsOf(core.db, statuses, filter, page);
        setCursorPageLinks(core, request, reply, ids, page.limit);
        // Rendered from the caches the timelines read (statusPage.ts), each status (and a reblog's
        // original) checked against the viewer; sent as the JSON it is built as.
        const json = await presentStatusPageJson(core, ids, viewer, { check: 'policy' });
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
      }
      return presentStatuses(core, await filterVisible(core, viewer, found), viewer);
    },
  );
};

export default accountStatusesArea;
