// Muting the notifications of a conversation (thread). Statuses without a conversation (some
// remote ones) cannot be muted: a validation error, as in Mastodon.
import { dropViewerFlags } from './viewerFlags.ts';
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { StatusDoc } from '../model/statuses.ts';
import { conversationMutes } from '../model/conversations.ts';
import { statusValidation } from '../statuses/errors.ts';
import type { NewEvent } from '../events/outbox.ts';

function muteEvent(
  type: 'ConversationMuted' | 'ConversationUnmuted',
  account: AccountDoc,
  status: StatusDoc,
  conversationId: bigint,
): NewEvent {
  return {
    type,
    key: String(account._id),
    payload: { accountId: String(account._id), conversationId: String(conversationId), statusId: String(status._id) },
    verify: {
      collection: 'conversation_mutes',
      filter: { accountId: account._id, conversationId },
      expect: type === 'ConversationMuted' ? 'exists' : 'absent',
    },
  };
}

function conversationOf(status: StatusDoc): bigint {
  if (status.conversationId === null) throw statusValidation('Conversation must exist');
  return status.conversationId;
}

export async function muteConversation(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  const conversationId = conversationOf(status);
  const coll = collection(core.db, conversationMutes);
  if (await coll.findOne({ accountId: account._id, conversationId })) return;
  const id = await nextSerialId(core.db, 'conversation_mutes');
  await core.outbox.write([muteEvent('ConversationMuted', account, status, conversationId)], async () => {
    await insertOnce(coll, { _id: id, accountId: account._id, conversationId, createdAt: new Date() });
  });
  await dropViewerFlags(core, account._id);
}

export async function unmuteConversation(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  const conversationId = conversationOf(status);
  const coll = collection(core.db, conversationMutes);
  if (!(await coll.findOne({ accountId: account._id, conversationId }))) return;
  await core.outbox.write([muteEvent('ConversationUnmuted', account, status, conversationId)], async () => {
    await coll.deleteOne({ accountId: account._id, conversationId });
  });
  await dropViewerFlags(core, account._id);
}
