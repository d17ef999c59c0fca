// Direct-message conversations as each local participant sees them (Mastodon's
// account_conversations): one document per (account, thread, other participants), holding the
// direct statuses of that thread the account can see, the newest one (the API pages by it) and
// whether the account has read it. Distinct from `conversations` (the threads themselves).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AccountConversationDoc {
  _id: Id;
  accountId: Id;
  /** The thread (`conversations._id`); for a status without one, the status's own id. */
  conversationId: Id;
  /** The other participants, sorted (empty for a note to oneself). */
  participantAccountIds: Id[];
  /** `participantAccountIds` joined: part of the unique key. */
  participantKey: string;
  statusIds: Id[];
  lastStatusId: Id;
  unread: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const accountConversations = defineCollection<AccountConversationDoc>('account_conversations', [
  { key: { accountId: 1, conversationId: 1, participantKey: 1 }, name: 'account_thread_participants', unique: true },
  { key: { accountId: 1, lastStatusId: -1 }, name: 'account_last_status' },
  { key: { statusIds: 1 }, name: 'status' },
]);
