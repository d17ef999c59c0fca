// Changing a posted status: deleting it (with its media at once when asked), editing it, and its
// quote policy (Mastodon 4.5). Registered by the statuses area.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Core } from '../../core/context.ts';
import { editStatus } from '../../core/statuses/editStatus.ts';
import { deleteStatus } from '../../core/statuses/deleteStatus.ts';
import { removeMediaOfDeletedStatus } from '../../core/media/removal.ts';
import { setQuotePolicy } from '../../core/quotes/quotes.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatus } from '../../core/entities/statusRender.ts';
import { requireUser } from '../plugins/auth.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { ApiError } from '../errors.ts';
import { BoolLike } from '../params.ts';
import { EditStatusBody, IdParams, InteractionPolicyBody, parseFlag } from './schemas.ts';
import { idList, idParam, visibleStatusOr404 } from './helpers.ts';
import { pollOf, quotePolicyOf } from './inputs.ts';
import { WRITE_STATUSES as WRITE } from '../scopes.ts';

const DeleteQuery = Type.Object({ delete_media: Type.Optional(BoolLike) });

export function registerStatusChangeRoutes(fastify: FastifyInstance, core: Core): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.delete(
    '/api/v1/statuses/:id',
    {
      config: { auth: WRITE },
      schema: { params: IdParams, querystring: DeleteQuery, response: { 200: StatusEntity } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      await enforceRateLimit(core, reply, RATE_LIMITS.deletes, String(account._id));
      const deleted = await deleteStatus(core, account, idParam(request.params.id));
      // Mastodon 4.4 (API level 4): the media go now instead of staying a day for a redraft.
      if (parseFlag(request.query?.delete_media) && deleted.reblogOfId === null)
        await removeMediaOfDeletedStatus(core, account._id, deleted._id);
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
}
