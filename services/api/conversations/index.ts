// Conversations area (direct messages): GET /api/v1/conversations, paginated by each
// conversation's newest status (max_id/since_id/min_id are status ids, as Mastodon), 20 per page,
// at most 40; POST /api/v1/conversations/:id/read and /unread; DELETE /api/v1/conversations/:id.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import type { AccountConversationDoc } from '../../core/model/accountConversations.ts';
import {
  deleteConversation,
  markConversationRead,
  setConversationUnread,
  conversationsPage,
  ownConversation,
} from '../../core/conversations/accountConversations.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';
import { ConversationEntity, presentConversations } from '../../core/entities/conversation.ts';
import { pageParams, setCursorPageLinks } from '../pagination.ts';
import { CursorQuery, Empty, IdParams } from '../params.ts';

const READ = { scopes: ['read', 'read:statuses'], user: 'required' as const };
const WRITE = { scopes: ['write', 'write:conversations'], user: 'required' as const };

const conversationsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/conversations',
    { schema: { querystring: CursorQuery, response: { 200: Type.Array(ConversationEntity) } }, config: { auth: READ } },
    async (request, reply) => {
      const { account } = requireUser(request);
      const p = pageParams(request.query, { defaultLimit: 20, maxLimit: 40 });
      const page = await conversationsPage(core, account._id, p);
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

  /** The caller's conversation named by `:id` (404 when it is not theirs). */
  async function conversationOf(request: FastifyRequest<{ Params: { id: string } }>) {
    const { account } = requireUser(request);
    const conversation = await ownConversation(core, account._id, parseId(request.params.id));
    if (!conversation) throw notFound();
    return { account, conversation };
  }

  /** The handler of a change to the caller's conversation, answering it as it is now. */
  const changeHandler =
    (change: (c: AccountConversationDoc) => Promise<AccountConversationDoc>) =>
    async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const { account, conversation } = await conversationOf(request);
      const [out] = await presentConversations(core, [await change(conversation)], account);
      return out;
    };

  app.post(
    '/api/v1/conversations/:id/read',
    { schema: { params: IdParams, response: { 200: ConversationEntity } }, config: { auth: WRITE } },
    changeHandler((c) => markConversationRead(core, c)),
  );

  // Not in Mastodon's documentation, but routed and used by its web app: marks unread again.
  app.post(
    '/api/v1/conversations/:id/unread',
    { schema: { params: IdParams, response: { 200: ConversationEntity } }, config: { auth: WRITE } },
    changeHandler((c) => setConversationUnread(core, c, true)),
  );

  app.delete(
    '/api/v1/conversations/:id',
    { schema: { params: IdParams, response: { 200: Empty } }, config: { auth: WRITE } },
    async (request) => {
      await deleteConversation(core, (await conversationOf(request)).conversation);
      return {};
    },
  );
};

export default conversationsArea;
