// Conversation entity (direct messages): `id`, `unread`, `accounts` (the other participants; the
// viewer alone for a note to oneself, as Mastodon) and `last_status`, rendered in batches.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { statuses } from '../model/statuses.ts';
import type { AccountConversationDoc } from '../model/accountConversations.ts';
import { AccountEntity, presentAccounts, type Account } from './account.ts';
import { StatusEntity, type Status } from './status.ts';
import { presentStatuses } from './statusRender.ts';

export const ConversationEntity = Type.Object({
  id: Type.String(),
  unread: Type.Boolean(),
  accounts: Type.Array(AccountEntity),
  last_status: Type.Union([StatusEntity, Type.Null()]),
});
export type Conversation = Static<typeof ConversationEntity>;

export async function presentConversations(
  core: Core,
  docs: AccountConversationDoc[],
  viewer: CachedAccount,
): Promise<Conversation[]> {
  if (docs.length === 0) return [];
  const accountIds = [...new Set(docs.flatMap((c) => c.participantAccountIds))];
  const [accountDocs, statusDocs] = await Promise.all([
    findInOrder(collection(core.db, accounts), accountIds),
    collection(core.db, statuses)
      .find({ _id: { $in: docs.map((c) => c.lastStatusId) }, deletedAt: null })
      .toArray(),
  ]);
  const [renderedAccounts, renderedStatuses, [self]] = await Promise.all([
    presentAccounts(core, accountDocs),
    presentStatuses(core, statusDocs, viewer),
    presentAccounts(core, [viewer]),
  ]);
  const accountById = new Map<bigint, Account>(accountDocs.map((a, i) => [a._id, renderedAccounts[i] as Account]));
  const statusById = new Map<bigint, Status>(statusDocs.map((s, i) => [s._id, renderedStatuses[i] as Status]));
  return docs.map((c) => {
    const others = c.participantAccountIds.map((a) => accountById.get(a)).filter((a): a is Account => !!a);
    return {
      id: String(c._id),
      unread: c.unread,
      accounts: others.length ? others : [self as Account],
      last_status: statusById.get(c.lastStatusId) ?? null,
    };
  });
}
