// The statuses area: posting, reading, editing, deleting, threads and interactions
// (/api/v1/statuses/**). Routes stay thin: parse, authorise, call core, present.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contextRefresh } from '../../core/activitypub/replies/refresh.ts';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId } from '../../core/ids.ts';
import type { AccountDoc, CachedAccount } from '../../core/model/accounts.ts';
import { findUnsuspendedAccounts } from '../../core/accounts/queries.ts';
import type { StatusDoc } from '../../core/model/statuses.ts';
import { postStatus, type PostStatusInput } from '../../core/statuses/postStatus.ts';
import { statusHistory } from '../../core/statuses/editStatus.ts';
import { statusContext } from '../../core/statuses/context.ts';
import { filterVisible } from '../../core/statuses/visibility.ts';
import { runIdempotent, type IdempotentResult } from '../../core/statuses/idempotency.ts';
import {
  createScheduledStatus,
  findScheduledStatus,
  scheduledParamsOf,
} from '../../core/scheduledStatuses/scheduledStatuses.ts';
import {
  favouritesOfStatus,
  findAuthor,
  findLiveStatus,
  findLiveStatuses,
  findStatus,
  hasMarked,
  reblogsOfStatus,
} from '../../core/statuses/reads.ts';
import { presentScheduledStatus } from '../../core/entities/scheduledStatus.ts';
import {
  favouriteStatus,
  unfavouriteStatus,
  bookmarkStatus,
  unbookmarkStatus,
} from '../../core/interactions/favourites.ts';
import { findReblog, reblogStatus, unreblogStatus } from '../../core/interactions/reblogs.ts';
import { pinStatus, unpinStatus } from '../../core/interactions/pins.ts';
import { muteConversation, unmuteConversation } from '../../core/interactions/conversationMutes.ts';
import { requireUser } from '../plugins/auth.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { ApiError, notFound } from '../errors.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatus, presentStatuses } from '../../core/entities/statusRender.ts';
import { presentStatusJson } from '../../core/entities/statusPageJson.ts';
import { StatusEditEntity, presentStatusEdits } from '../../core/entities/statusEdit.ts';
import { StatusSourceEntity, presentStatusSource } from '../../core/entities/statusSource.ts';
import { AccountEntity, presentAccounts } from '../../core/entities/account.ts';
import { pageParams, setRecordPageLinks, type PageParams } from '../pagination.ts';
import { IdParams, PageQuery, PostStatusBody, ReblogBody, parseFlag } from './schemas.ts';
import { idList, idParam, viewerOf, visibleStatusOr404 } from './helpers.ts';
import { registerStatusChangeRoutes } from './changes.ts';
import { registerQuoteRoutes } from './quoteRoutes.ts';
import { pollOf, quotePolicyOf, visibilityOf } from './inputs.ts';
import { QUOTED_STATUS_NOT_FOUND, quotableStatus } from '../../core/quotes/quotes.ts';
import { epochMs, traceStage, tracingStages } from '../../core/streaming/latencyTrace.ts';
import {
  READ_STATUSES_PUBLIC as READ,
  WRITE_STATUSES as WRITE,
  WRITE_FAVOURITES as FAVOURITES,
  WRITE_BOOKMARKS as BOOKMARKS,
  WRITE_ACCOUNTS as PINS,
  WRITE_MUTES as MUTES,
} from '../scopes.ts';

export function postInputOf(body: PostStatusBody): PostStatusInput {
  const inReplyToId = body.in_reply_to_id ? parseId(body.in_reply_to_id) : null;
  if (body.in_reply_to_id && inReplyToId === null)
    throw new ApiError(404, 'The post you are trying to reply to does not appear to exist.');
  const quotedStatusId = body.quoted_status_id ? parseId(body.quoted_status_id) : null;
  if (body.quoted_status_id && quotedStatusId === null) throw new ApiError(404, QUOTED_STATUS_NOT_FOUND);
  return {
    quotedStatusId,
    quotePolicy: quotePolicyOf(body.quote_approval_policy),
    text: body.status ?? '',
    spoilerText: body.spoiler_text ?? '',
    sensitive: parseFlag(body.sensitive),
    visibility: visibilityOf(body.visibility),
    language: body.language ?? null,
    inReplyToId,
    mediaIds: idList(body.media_ids),
    poll: pollOf(body.poll),
    // Mastodon reads them with to_i: what is not an id allows nobody.
    allowedMentions: body.allowed_mentions
      ? body.allowed_mentions.map((v) => parseId(v)).filter((v) => v !== null)
      : null,
  };
}

/** The status with the viewer's flags, or 404 when it is gone. */
async function answer(core: Core, id: bigint, viewer: CachedAccount) {
  const status = await findStatus(core, id);
  if (!status) throw notFound();
  return presentStatus(core, status, viewer);
}

/** For undo actions: the status (deleted ones excepted) when the caller has the record, else only if visible. */
async function statusForUndo(
  core: Core,
  viewer: CachedAccount,
  rawId: string,
  hasRecord: (s: StatusDoc) => Promise<boolean>,
): Promise<StatusDoc> {
  const status = await findLiveStatus(core, idParam(rawId));
  if (status && (await hasRecord(status))) return status;
  return visibleStatusOr404(core, viewer, rawId);
}

/** The original of a reblog (visibility-checked), or the status itself. */
async function properStatus(core: Core, viewer: CachedAccount, status: StatusDoc): Promise<StatusDoc> {
  return status.reblogOfId === null ? status : visibleStatusOr404(core, viewer, String(status.reblogOfId));
}

const statusesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/statuses',
    { config: { auth: WRITE }, schema: { body: PostStatusBody } },
    async (request, reply) => {
      // For the api benchmark's stages of a post (TRACE_STAGES=1): when the request arrived.
      const arrived = tracingStages ? epochMs() - reply.elapsedTime : 0;
      const { account, user, app: oauthApp } = requireUser(request);
      const body = request.body;
      await enforceRateLimit(core, reply, RATE_LIMITS.statuses, String(account._id));
      const header = request.headers['idempotency-key'];
      const key = typeof header === 'string' && header ? header.slice(0, 512) : null;
      const input = postInputOf(body);
      const scheduledAt = body.scheduled_at ? new Date(body.scheduled_at) : null;
      if (scheduledAt && Number.isNaN(scheduledAt.getTime())) throw new ApiError(422, 'Invalid date supplied');
      // The status this request made (none when an idempotent replay answers a former one's).
      let posted: StatusDoc | null = null;
      const create = async (): Promise<IdempotentResult> => {
        if (!scheduledAt) {
          posted = await postStatus(core, account, input, { applicationId: oauthApp._id, user });
          traceStage(posted._id, 'post.arrived', arrived);
          return { kind: 'status', id: posted._id };
        }
        // Mastodon checks the quoted post when the post is scheduled, and again when it is published.
        if (input.quotedStatusId) await quotableStatus(core, account, input.quotedStatusId);
        const params = await scheduledParamsOf(core, account, input);
        return {
          kind: 'scheduled',
          id: (
            await createScheduledStatus(core, account, params, scheduledAt, {
              applicationId: oauthApp._id,
              idempotencyKey: key,
            })
          )._id,
        };
      };
      const { result } = key ? await runIdempotent(core, account._id, key, create) : { result: await create() };
      if (result.kind === 'scheduled') {
        const scheduled = await findScheduledStatus(core, result.id);
        if (!scheduled) throw notFound();
        return reply.send(await presentScheduledStatus(core, scheduled));
      }
      // (Set by create(), which TypeScript does not follow.)
      const made = posted as StatusDoc | null;
      if (made) {
        // Rendered as the timelines render it, which also caches the rendering they will read;
        // the author sees their own status ('feed': no policy queries).
        const json = await presentStatusJson(core, made._id, account, {
          check: 'feed',
          docs: [made],
          justPosted: true,
        });
        traceStage(made._id, 'post.rendered');
        if (json !== null) return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
      }
      const doc = await findStatus(core, result.id);
      if (!doc) throw notFound();
      return presentStatus(core, doc, account);
    },
  );

  app.get(
    '/api/v1/statuses',
    {
      config: { auth: READ },
      schema: {
        querystring: Type.Object({ id: Type.Optional(Type.Array(Type.String())) }),
        response: { 200: Type.Array(StatusEntity) },
      },
    },
    async (request) => {
      // Mastodon: unique ids (at most 20, else 422), unknown or invisible ones skipped.
      const ids = [...new Set((request.query.id ?? []).map((v) => parseId(v)).filter((v) => v !== null))];
      if (ids.length > 20) throw new ApiError(422, 'Validation failed: Too many ids (at most 20)');
      const ordered = await findLiveStatuses(core, ids);
      return presentStatuses(core, await filterVisible(core, viewerOf(request), ordered), viewerOf(request));
    },
  );

  app.get(
    '/api/v1/statuses/:id',
    { config: { auth: READ }, schema: { params: IdParams, response: { 200: StatusEntity } } },
    async (request, reply) => {
      // From the caches the timelines read (statusPage.ts): no MongoDB query but the blocks one.
      const json = await presentStatusJson(core, idParam(request.params.id), viewerOf(request));
      if (json === null) throw notFound();
      // Built to the Status schema from cached JSON, as the timelines send theirs.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
    },
  );

  registerStatusChangeRoutes(app, core);

  registerQuoteRoutes(app, core);

  app.get(
    '/api/v1/statuses/:id/context',
    { config: { auth: READ }, schema: { params: IdParams } },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const status = await visibleStatusOr404(core, viewer, request.params.id);
      const refresh = await contextRefresh(core, status, viewer !== null);
      if (refresh !== null) void reply.header('mastodon-async-refresh', refresh);
      const { ancestors, descendants } = await statusContext(core, viewer, status);
      const rendered = await presentStatuses(core, [...ancestors, ...descendants], viewer);
      return { ancestors: rendered.slice(0, ancestors.length), descendants: rendered.slice(ancestors.length) };
    },
  );

  app.get(
    '/api/v1/statuses/:id/history',
    { config: { auth: READ }, schema: { params: IdParams, response: { 200: Type.Array(StatusEditEntity) } } },
    async (request) => {
      const status = await visibleStatusOr404(core, viewerOf(request), request.params.id);
      const author = await findAuthor(core, status);
      if (!author) throw notFound();
      return presentStatusEdits(core, await statusHistory(core, status), author);
    },
  );

  app.get(
    '/api/v1/statuses/:id/source',
    {
      config: { auth: { scopes: ['read', 'read:statuses'], user: 'required' } },
      schema: { params: IdParams, response: { 200: StatusSourceEntity } },
    },
    async (request) => {
      const { account } = requireUser(request);
      const status = await visibleStatusOr404(core, account, request.params.id);
      if (status.accountId !== account._id) throw notFound();
      return presentStatusSource(status);
    },
  );

  // Interactions ----------------------------------------------------------------------------
  const action = (
    path: string,
    auth: typeof WRITE,
    handler: (core: Core, account: AccountDoc, rawId: string) => Promise<bigint>,
  ) =>
    app.post(
      path,
      { config: { auth }, schema: { params: IdParams, body: ReblogBody, response: { 200: StatusEntity } } },
      async (request) => {
        const { account } = requireUser(request);
        return answer(core, await handler(core, account, request.params.id), account);
      },
    );

  // Favourites and bookmarks of a reblog go to the original (Mastodon's models resolve
  // `status.reblog`); the answer is the status asked about.
  // Act on a status the caller can see (404 as for a missing one otherwise).
  const onVisible =
    (op: (c: Core, account: AccountDoc, status: StatusDoc) => Promise<unknown>) =>
    async (c: Core, account: AccountDoc, raw: string) => {
      const status = await visibleStatusOr404(c, account, raw);
      await op(c, account, status);
      return status._id;
    };
  // Undo a mark the caller made, even after losing access to the status (see statusForUndo).
  const undoMark =
    (marks: 'favourites' | 'bookmarks', op: (c: Core, account: AccountDoc, status: StatusDoc) => Promise<unknown>) =>
    async (c: Core, account: AccountDoc, raw: string) => {
      const marked = (s: StatusDoc) => hasMarked(c, marks, account._id, s._id);
      const status = await statusForUndo(c, account, raw, marked);
      await op(c, account, status);
      return status._id;
    };

  // Favourites and bookmarks of a reblog go to the original (Mastodon's models resolve
  // `status.reblog`); the answer is the status asked about.
  action(
    '/api/v1/statuses/:id/favourite',
    FAVOURITES,
    onVisible(async (c, account, status) => favouriteStatus(c, account, await properStatus(c, account, status))),
  );
  action('/api/v1/statuses/:id/unfavourite', FAVOURITES, undoMark('favourites', unfavouriteStatus));
  action(
    '/api/v1/statuses/:id/bookmark',
    BOOKMARKS,
    onVisible(async (c, account, status) => bookmarkStatus(c, account, await properStatus(c, account, status))),
  );
  action('/api/v1/statuses/:id/unbookmark', BOOKMARKS, undoMark('bookmarks', unbookmarkStatus));
  action('/api/v1/statuses/:id/pin', PINS, onVisible(pinStatus));
  action('/api/v1/statuses/:id/unpin', PINS, onVisible(unpinStatus));
  action('/api/v1/statuses/:id/mute', MUTES, onVisible(muteConversation));
  action('/api/v1/statuses/:id/unmute', MUTES, onVisible(unmuteConversation));

  app.post(
    '/api/v1/statuses/:id/reblog',
    { config: { auth: WRITE }, schema: { params: IdParams, body: ReblogBody, response: { 200: StatusEntity } } },
    async (request) => {
      const { account } = requireUser(request);
      let status = await visibleStatusOr404(core, account, request.params.id);
      if (status.reblogOfId !== null) status = await visibleStatusOr404(core, account, String(status.reblogOfId));
      const reblog = await reblogStatus(core, account, status, visibilityOf(request.body.visibility));
      return presentStatus(core, reblog, account);
    },
  );

  app.post(
    '/api/v1/statuses/:id/unreblog',
    { config: { auth: WRITE }, schema: { params: IdParams, response: { 200: StatusEntity } } },
    async (request, reply) => {
      const { account } = requireUser(request);
      await enforceRateLimit(core, reply, RATE_LIMITS.deletes, String(account._id));
      const status = await statusForUndo(
        core,
        account,
        request.params.id,
        async (s) => (await findReblog(core, account, s)) !== null,
      );
      await unreblogStatus(core, account, status);
      return answer(core, status._id, account);
    },
  );

  // Who interacted ---------------------------------------------------------------------------
  // The accounts behind a status's favourites or reblogs, newest first, paged by those records' ids.
  const whoInteracted = (
    path: string,
    records: (status: StatusDoc, p: PageParams) => Promise<{ _id: bigint; accountId: bigint }[]>,
  ) =>
    app.get(
      path,
      {
        config: { auth: READ },
        schema: { params: IdParams, querystring: PageQuery, response: { 200: Type.Array(AccountEntity) } },
      },
      async (request, reply) => {
        const status = await visibleStatusOr404(core, viewerOf(request), request.params.id);
        const p = pageParams(request.query, { defaultLimit: 40, maxLimit: 80 });
        const page = await records(status, p);
        setRecordPageLinks(core, request, reply, page, p.limit);
        return presentAccounts(
          core,
          await findUnsuspendedAccounts(
            core,
            page.map((r) => r.accountId),
          ),
        );
      },
    );
  whoInteracted('/api/v1/statuses/:id/favourited_by', (status, p) => favouritesOfStatus(core, status._id, p));
  whoInteracted('/api/v1/statuses/:id/reblogged_by', (status, p) => reblogsOfStatus(core, status._id, p));
};

export default statusesArea;
