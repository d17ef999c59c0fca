// A conversation's last status and unread flag (core/conversations/accountConversations.ts): the
// newest status sets both, a late older one changes neither, a replay changes nothing.
import type { Core } from '../../../services/core/context.ts';
import {
  addStatusToConversation,
  type DirectStatus,
} from '../../../services/core/conversations/accountConversations.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';

let core: Core;
beforeAll(async () => {
  ({ core } = await createTestCore());
});
afterAll(async () => {
  if (core) await closeTestCore(core);
});

it('keeps the newest status and its unread flag whatever order the statuses arrive in', async () => {
  const [alice, bob] = [9_000_001n, 9_000_002n];
  const thread = 7_000_000_001n;
  const status = (statusId: bigint, accountId: bigint): DirectStatus => ({
    statusId,
    accountId,
    conversationId: thread,
    mentionedAccountIds: [accountId === alice ? bob : alice],
  });

  // alice's first message: alice's own conversation is read.
  expect(await addStatusToConversation(core, alice, status(100n, alice))).toMatchObject({
    lastStatusId: 100n,
    unread: false,
  });
  // bob's answer is newer: last status and unread change together.
  const answered = await addStatusToConversation(core, alice, status(300n, bob));
  expect(answered).toMatchObject({ lastStatusId: 300n, unread: true, statusIds: [100n, 300n] });
  // An older message of alice's arriving late joins, and changes neither.
  const late = await addStatusToConversation(core, alice, status(200n, alice));
  expect(late).toMatchObject({ _id: answered._id, lastStatusId: 300n, unread: true });
  expect([...late.statusIds].sort()).toEqual([100n, 200n, 300n]);
  // A replay of the newest (an event handled again) changes nothing.
  expect(await addStatusToConversation(core, alice, status(300n, bob))).toMatchObject({
    _id: answered._id,
    lastStatusId: 300n,
    unread: true,
  });
});
