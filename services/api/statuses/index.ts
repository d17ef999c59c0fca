// The statuses area: posting, reading, editing, deleting, threads and interactions
// (/api/v1/statuses/**). Routes stay thin: parse, authorise, call core, present.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contextRefresh } from '../../core/activitypub/replies/refresh.ts';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId } from '../../core/ids.ts';
import { collection } from '../../core/db/mongo.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { accounts } from '../../core/model/accounts.ts';
import { statuses, type StatusDoc } from '../../core/model/statuses.ts';
import { postStatus, type PostStatusInput } from '../../core/statuses/postStatus.ts';
import { editStatus, statusHistory } from '../../core/statuses/editStatus.ts';
import { deleteStatus } from '../../core/statuses/deleteStatus.ts';
import { statusContext } from '../../core/statuses/context.ts';
import { filterVisible } from '../../core/statuses/visibility.ts';
import type { PollInput } from '../../core/statuses/attachments.ts';
import { runIdempotent, type IdempotentResult } from '../../core/statuses/idempotency.ts';
import { users } from '../../core/model/users.ts';
import { scheduledStatuses, type ScheduledStatusParams } from '../../core/model/scheduledStatuses.ts';
import { createScheduledStatus } from '../../core/scheduledStatuses/scheduledStatuses.ts';
import { presentScheduledStatus } from '../../core/entities/scheduledStatus.ts';
import { requireUser } from '../plugins/auth.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { ApiError, notFound } from '../errors.ts';
import { StatusEntity, presentStatus, presentStatuses } from '../../core/entities/status.ts';
import { presentStatusJson } from '../../core/entities/statusPageJson.ts';
import { StatusEditEntity, presentStatusEdits } from '../../core/entities/statusEdit.ts';
import { StatusSourceEntity, presentStatusSource } from '../../core/entities/statusSource.ts';
import { findPage, pageParams, setLinkHeader } from '../pagination.ts';
import {
  EditStatusBody,
  IdParams,
  InteractionPolicyBody,
  QuoteParams,
  PageQuery,
  PostStatusBody,
  parseFlag,
  type PollBody,
} from './schemas.ts';
import { idList, idParam, READ, viewerOf, visibilityOf, visibleStatusOr404, WRITE } from './helpers.ts';
import { statusInteractions } from './interactions.ts';
import type { Static } from '@sinclair/typebox';
import { isQuotePolicySetting, type QuotePolicySetting } from '../../core/quotes/policy.ts';
import { QUOTED_STATUS_NOT_FOUND, quotableStatus, revokeQuote, setQuotePolicy } from '../../core/quotes/quotes.ts';

function pollOf(body: Static<typeof PollBody> | null | undefined): PollInput | null {
  if (!body) return null;
  // The polls module validates and normalises (422 with Mastodon's wording).
  return {
    options: body.options as string[],
    expiresIn: body.expires_in as number,
    multiple: parseFlag(body.multiple) ?? false,
    hideTotals: parseFlag(body.hide_totals) ?? false,
  };
}

/** `quote_approval_policy`: null when not given; Mastodon answers anything else than its three with 422. */
function quotePolicyOf(value: string | null | undefined): QuotePolicySetting | null {
  if (value === undefined || value === null || value === '') return null;
  if (!isQuotePolicySetting(value)) throw new ApiError(422, 'Record invalid');
  return value;
}

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

/** A scheduled post stores its parameters with the author's defaults resolved. */
async function scheduledParamsOf(
  core: Core,
  account: AccountDoc,
  input: PostStatusInput,
): Promise<ScheduledStatusParams> {
  const user = await collection(core.db, users).findOne({ accountId: account._id });
  const spoilerText = (input.spoilerText ?? '').trim();
  return {
    text: input.text ?? '',
    spoilerText,
    sensitive: (input.sensitive ?? user?.settings.defaultSensitive ?? false) || spoilerText !== '',
    visibility: input.visibility ?? user?.settings.defaultPrivacy ?? 'public',
    language: input.language ?? null,
    inReplyToId: input.inReplyToId ?? null,
    mediaIds: input.mediaIds ?? [],
    poll: input.poll ?? null,
    quotedStatusId: input.quotedStatusId ?? null,
    quotePolicy: input.quotePolicy ?? null,
  };
}

const statusesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/statuses',
    { config: { auth: WRITE }, schema: { body: PostStatusBody } },
    async (request, reply) => {
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
        const scheduled = await collection(core.db, scheduledStatuses).findOne({ _id: result.id });
        if (!scheduled) throw notFound();
        return reply.send(await presentScheduledStatus(core, scheduled));
      }
      // (Set by create(), which TypeScript does not follow.)
      const made = posted as StatusDoc | null;
      if (made) {
        // Rendered as the timelines render it, which also caches the rendering they will read;
        // the author sees their own status ('feed': no policy queries).
        const json = await presentStatusJson(core, made._id, account, { check: 'feed', docs: [made] });
        if (json !== null) return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
      }
      const doc = await collection(core.db, statuses).findOne({ _id: result.id });
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
      const found = await collection(core.db, statuses)
        .find({ _id: { $in: ids }, deletedAt: null })
        .toArray();
      const byId = new Map(found.map((s) => [s._id, s]));
      const ordered = ids.map((id) => byId.get(id)).filter((s) => s !== undefined);
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

  app.delete(
    '/api/v1/statuses/:id',
    { config: { auth: WRITE }, schema: { params: IdParams, response: { 200: StatusEntity } } },
    async (request, reply) => {
      const { account } = requireUser(request);
      await enforceRateLimit(core, reply, RATE_LIMITS.deletes, String(account._id));
      const deleted = await deleteStatus(core, account, idParam(request.params.id));
      return presentStatus(core, { ...deleted, deletedAt: null }, account, { source: true });
    },
  );

  app.put(
    '/api/v1/statuses/:id',
    { config: { auth: WRITE }, schema: { params: IdParams, body: EditStatusBody, response: { 200: StatusEntity } } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const before = await visibleStatusOr404(core, account, request.params.id);
      await enforceRateLimit(core, reply, RATE_LIMITS.statusEdits, String(account._id));
      const body = request.body;
      const quotePolicy = quotePolicyOf(body.quote_approval_policy);
      // Set before the edit, whose event then carries it to the streams and remote servers.
      if (quotePolicy && before.accountId === account._id)
        await setQuotePolicy(core, account, before, quotePolicy, false);
      const attrs = body.media_attributes
        ? Array.isArray(body.media_attributes)
          ? body.media_attributes
          : Object.values(body.media_attributes)
        : [];
      const updated = await editStatus(core, account, idParam(request.params.id), {
        text: body.status ?? '',
        spoilerText: body.spoiler_text ?? '',
        sensitive: parseFlag(body.sensitive),
        language: body.language ?? null,
        mediaIds: idList(body.media_ids),
        mediaAttributes: attrs.map((a) => ({ id: idList([a.id])[0], description: a.description, focus: a.focus })),
        poll: pollOf(body.poll),
      });
      return presentStatus(core, updated, account);
    },
  );

  // Quote posts (Mastodon 4.5) -------------------------------------------------------------------
  app.put(
    '/api/v1/statuses/:id/interaction_policy',
    {
      config: { auth: WRITE },
      schema: { params: IdParams, body: InteractionPolicyBody, response: { 200: StatusEntity } },
    },
    async (request) => {
      const { account } = requireUser(request);
      const status = await visibleStatusOr404(core, account, request.params.id);
      const setting = quotePolicyOf(request.body?.quote_approval_policy);
      if (!setting) throw new ApiError(422, 'Record invalid');
      const updated = await setQuotePolicy(core, account, status, setting);
      return presentStatus(core, updated, account);
    },
  );

  app.get(
    '/api/v1/statuses/:id/quotes',
    {
      config: { auth: READ },
      schema: { params: IdParams, querystring: PageQuery, response: { 200: Type.Array(StatusEntity) } },
    },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const status = await visibleStatusOr404(core, viewer, request.params.id);
      // Mastodon 4.5 shows who quoted a post to its author only.
      if (!viewer || viewer._id !== status.accountId) throw new ApiError(403, 'This action is not allowed');
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await findPage(
        collection(core.db, statuses),
        { 'quote.quotedStatusId': status._id, 'quote.state': 'accepted', deletedAt: null },
        p,
      );
      setLinkHeader(core, request, reply, {
        oldest: page.at(-1)?._id ?? null,
        newest: page[0]?._id ?? null,
        count: page.length,
        limit: p.limit,
        prevParam: 'since_id',
      });
      return presentStatuses(core, await filterVisible(core, viewer, page), viewer);
    },
  );

  app.post(
    '/api/v1/statuses/:id/quotes/:quoting_status_id/revoke',
    { config: { auth: WRITE }, schema: { params: QuoteParams, response: { 200: StatusEntity } } },
    async (request) => {
      const { account } = requireUser(request);
      const status = await visibleStatusOr404(core, account, request.params.id);
      const quoting = await revokeQuote(core, account, status._id, idParam(request.params.quoting_status_id));
      return presentStatus(core, quoting, account);
    },
  );

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
      const author = await collection(core.db, accounts).findOne({ _id: status.accountId });
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

  await statusInteractions(app, { core });
};

export default statusesArea;
