// Conversations (threads): every local root status starts one, replies inherit it. Remote statuses
// may have none, which is why muting a conversation can fail validation.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import type { AccountRecordDoc } from './accountRecord.ts';

export interface ConversationDoc {
  _id: Id;
  /** ActivityPub `context`/`conversation` of remote threads; null for local ones. */
  uri: string | null;
  createdAt: Date;
}

export const conversations = defineCollection<ConversationDoc>('conversations', [{ key: { uri: 1 }, name: 'uri' }]);

/** A viewer muted notifications of a conversation. */
export interface ConversationMuteDoc extends AccountRecordDoc {
  conversationId: Id;
}

export const conversationMutes = defineCollection<ConversationMuteDoc>('conversation_mutes', [
  { key: { accountId: 1, conversationId: 1 }, name: 'account_conversation', unique: true },
]);
