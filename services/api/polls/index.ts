// Polls area: read a poll (anyone who may see its status; non-public ones need a token) and vote.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import type { PollDoc } from '../../core/model/polls.ts';
import { requireUser } from '../plugins/auth.ts';
import { missingParam, notFound } from '../errors.ts';
import { parseId } from '../../core/ids.ts';
import { findPoll, parseChoices, votePoll } from '../../core/polls/polls.ts';
import { findVisibleStatus } from '../../core/statuses/visibility.ts';
import { PollEntity, presentPoll } from '../../core/entities/poll.ts';
import { AnyIdParams } from '../params.ts';

/** The poll if its status exists and the viewer may see it; 404 otherwise (existence is not revealed). */
async function visiblePoll(core: Core, viewer: CachedAccount | null, rawId: string): Promise<PollDoc> {
  const id = parseId(rawId);
  const poll = id === null ? null : await findPoll(core, id);
  if (!poll) throw notFound();
  const status = await findVisibleStatus(core, viewer, poll.statusId);
  if (!status) throw notFound();
  return poll;
}

const pollsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/polls/:id',
    {
      config: { auth: { scopes: ['read', 'read:statuses'], user: 'optional' } },
      schema: { params: AnyIdParams, response: { 200: PollEntity } },
    },
    async (request) => {
      const viewer = request.auth?.account ?? null;
      const poll = await visiblePoll(core, viewer, request.params.id);
      return presentPoll(core, poll, viewer?._id ?? null);
    },
  );

  app.post(
    '/api/v1/polls/:id/votes',
    {
      config: { auth: { scopes: ['write', 'write:statuses'], user: 'required' } },
      schema: {
        params: AnyIdParams,
        body: Type.Object({ choices: Type.Optional(Type.Unknown()) }, { additionalProperties: true }),
        response: { 200: PollEntity },
      },
    },
    async (request) => {
      const { account } = requireUser(request);
      const poll = await visiblePoll(core, account, request.params.id);
      const raw = (request.body as { choices?: unknown } | undefined)?.choices;
      if (raw === undefined || raw === null || raw === '' || (Array.isArray(raw) && raw.length === 0))
        throw missingParam('choices');
      const choices = parseChoices(raw);
      const updated = await votePoll(core, account, poll, choices);
      return presentPoll(core, updated, account._id);
    },
  );
};

export default pollsArea;
