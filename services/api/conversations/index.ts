// Conversations area (direct messages): GET /api/v1/conversations, paginated by each
// conversation's newest status (max_id/since_id/min_id are status ids, as Mastodon), 20 per page,
// at most 40; POST /api/v1/conversations/:id/read and /unread; DELETE /api/v1/conversations/:id.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { collection } from '../../core/db/mongo.ts';
import { accountConversations } from '../../core/model/accountConversations.ts';
import {
  deleteConversation,
  markConversationRead,
  setConversationUnread,
  ownConversation,
} from '../../core/conversations/accountConversations.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';
import { ConversationEntity, presentConversations } from '../../core/entities/conversation.ts';
import { findPage, pageParams, setCursorPageLinks } from '../pagination.ts';
import { IdParams } from '../params.ts';

const READ = { scopes: ['read', 'read:statuses'], user: 'required' as const };
const WRITE = { scopes: ['write', 'write:conversations'], user: 'required' as const };

const Str = Type.String({ maxLength: 100 });
const ListQuery = Type.Object(
  {
    max_id: Type.Optional(Str),
    since_id: Type.Optional(Str),
    min_id: Type.Optional(Str),
    limit: Type.Optional(Str),
  },
  { additionalProperties: true },
);

const conversationsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/conversations',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(ConversationEntity) } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await findPage(
        collection(core.db, accountConversations),
        { accountId: account._id },
        p,
        'lastStatusId',
      );
      setCursorPageLinks(
        core,
        request,
        reply,
        page.map((c) => c.lastStatusId),
        p.limit,
      );
      return presentConversations(core, page, account);
    },
  );

  app.post(
    '/api/v1/conversations/:id/read',
    { schema: { params: IdParams, response: { 200: ConversationEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const c = await ownConversation(core, account._id, parseId(request.params.id));
      if (!c) throw notFound();
      const [out] = await presentConversations(core, [await markConversationRead(core, c)], account);
      return out;
    },
  );

  // Not in Mastodon's documentation, but routed and used by its web app: marks unread again.
  app.post(
    '/api/v1/conversations/:id/unread',
    { schema: { params: IdParams, response: { 200: ConversationEntity } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const c = await ownConversation(core, account._id, parseId(request.params.id));
      if (!c) throw notFound();
      const [out] = await presentConversations(core, [await setConversationUnread(core, c, true)], account);
      return out;
    },
  );

  app.delete(
    '/api/v1/conversations/:id',
    { schema: { params: IdParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const c = await ownConversation(core, account._id, parseId(request.params.id));
      if (!c) throw notFound();
      await deleteConversation(core, c);
      return {};
    },
  );
};

export default conversationsArea;
