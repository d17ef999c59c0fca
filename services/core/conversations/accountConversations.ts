// Direct-message conversations (Mastodon's AccountConversation): a direct status is added to the
// conversation of its author and of each local mentioned account whose mention notification was
// delivered (not suppressed or filtered into a request). The participants are everyone in the
// status (author + mentions) but the account itself; the conversation is unread for everyone
// but the author of its newest status. Deleting a status removes it again (and the conversation
// once empty).
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { findPageIn, type PageParams } from '../db/pages.ts';
import { accountConversations, type AccountConversationDoc } from '../model/accountConversations.ts';

export interface DirectStatus {
  statusId: Id;
  accountId: Id;
  conversationId: Id | null;
  mentionedAccountIds: Id[];
}

export function participantsFor(recipient: Id, s: DirectStatus): Id[] {
  const all = new Set<bigint>([s.accountId, ...s.mentionedAccountIds]);
  all.delete(recipient);
  return [...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Adds the status to `recipient`'s conversation (creating it); returns the conversation as stored. */
export async function addStatusToConversation(
  core: Core,
  recipient: Id,
  s: DirectStatus,
): Promise<AccountConversationDoc> {
  const participants = participantsFor(recipient, s);
  const key = {
    accountId: recipient,
    conversationId: s.conversationId ?? s.statusId,
    participantKey: participants.join(','),
  };
  const unread = s.accountId !== recipient;
  const coll = collection(core.db, accountConversations);
  for (let attempt = 0; ; attempt++) {
    // The newest status sets the last status and unread in one write: a reader never sees the
    // new last status with the old unread flag.
    const newest = await coll.findOneAndUpdate(
      { ...key, lastStatusId: { $lt: s.statusId } },
      { $addToSet: { statusIds: s.statusId }, $set: { lastStatusId: s.statusId, unread, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (newest) return newest;
    // An older status arriving late (or the same one again) only joins the conversation.
    const joined = await coll.findOneAndUpdate(
      key,
      { $addToSet: { statusIds: s.statusId }, $set: { updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (joined) return joined;
    const now = new Date();
    const doc: AccountConversationDoc = {
      _id: await nextSerialId(core.db, 'account_conversations'),
      ...key,
      participantAccountIds: participants,
      statusIds: [s.statusId],
      lastStatusId: s.statusId,
      unread,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await coll.insertOne(doc);
      return doc;
    } catch (err) {
      // Another event created it first: add to theirs.
      if (!isDuplicateKeyError(err) || attempt >= 3) throw err;
    }
  }
}

/** Removes a deleted status from every conversation holding it; empty conversations go. */
export async function removeStatusFromConversations(core: Core, statusId: Id): Promise<void> {
  const coll = collection(core.db, accountConversations);
  const holding = await coll.find({ statusIds: statusId }).toArray();
  for (const c of holding) {
    const rest = c.statusIds.filter((id) => id !== statusId);
    if (rest.length === 0) await coll.deleteOne({ _id: c._id });
    else {
      const last = rest.reduce((a, b) => (a > b ? a : b));
      await coll.updateOne({ _id: c._id }, { $pull: { statusIds: statusId }, $set: { lastStatusId: last } });
    }
  }
}

/** A page of the account's conversations, the latest status first (cursor on it). */
export function conversationsPage(core: Core, accountId: Id, p: PageParams): Promise<AccountConversationDoc[]> {
  return findPageIn(core.db, accountConversations, { accountId }, p, 'lastStatusId');
}

export function ownConversation(core: Core, accountId: Id, id: Id | null): Promise<AccountConversationDoc | null> {
  if (id === null) return Promise.resolve(null);
  return collection(core.db, accountConversations).findOne({ _id: id, accountId });
}

export async function markConversationRead(core: Core, c: AccountConversationDoc): Promise<AccountConversationDoc> {
  return setConversationUnread(core, c, false);
}

/** Marks the conversation read or (POST /api/v1/conversations/:id/unread) unread again. */
export async function setConversationUnread(
  core: Core,
  c: AccountConversationDoc,
  unread: boolean,
): Promise<AccountConversationDoc> {
  await collection(core.db, accountConversations).updateOne({ _id: c._id }, { $set: { unread } });
  return { ...c, unread };
}

export async function deleteConversation(core: Core, c: AccountConversationDoc): Promise<void> {
  await collection(core.db, accountConversations).deleteOne({ _id: c._id });
}
