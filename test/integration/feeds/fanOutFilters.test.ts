// The fan-out skips reading who blocks, mutes or lists an author nobody does (ADR 0020): the flag
// every new account starts with, set by the first block, mute or list membership about it (before
// the record), and learnt once for accounts from before the flag. A post of a flagged author is
// still kept from whoever mutes them.
import type { CommandStartedEvent } from 'mongodb';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { nextSerialId } from '../../../services/core/ids.ts';
import { accounts, type AccountDoc } from '../../../services/core/model/accounts.ts';
import { blocks } from '../../../services/core/model/blocks.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { blockAccount } from '../../../services/core/graph/block.ts';
import { muteAccount } from '../../../services/core/graph/mute.ts';
import { addListMembers, createList } from '../../../services/core/lists/lists.ts';
import { mayBeFiltered } from '../../../services/core/feeds/fanOutFilters.ts';
import { markActive } from '../../../services/core/feeds/activity.ts';
import { feedIds, feedKey } from '../../../services/core/feeds/feeds.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { createCommandReportingCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { caughtUp, consumerTuning } from '../../support/kafka.ts';

let core: Core;
let close: () => Promise<void>;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  ({ core, close } = await createCommandReportingCore());
  pipeline = await runFanOutPipeline(core, consumerTuning);
});

afterAll(async () => {
  await pipeline?.stop();
  await close();
});

const flagOf = async (id: bigint) => (await collection(core.db, accounts).findOne({ _id: id }))?.fanOutFilters;
const user = async () => (await createTestUser(core)).account as AccountDoc;

test('a new account is in nobody’s records; a block, a mute or a list membership flags it', async () => {
  const [owner, blocked, muted, listed] = await Promise.all([user(), user(), user(), user()]);
  expect(await flagOf(blocked._id)).toBe(false);
  await blockAccount(core, owner, blocked);
  await muteAccount(core, owner, muted);
  await followAccount(core, owner, listed);
  await addListMembers(core, await createList(core, owner, { title: 'l' }), [listed._id]);
  expect([await flagOf(blocked._id), await flagOf(muted._id), await flagOf(listed._id)]).toEqual([true, true, true]);
  // Undoing the record leaves the flag: the fan-out then reads, and finds nobody.
  expect(await flagOf(owner._id)).toBe(false);
});

test('an account from before the flag is looked up once and the answer kept', async () => {
  const [clear, blockedEarlier, blocker] = await Promise.all([user(), user(), user()]);
  await collection(core.db, accounts).updateMany(
    { _id: { $in: [clear._id, blockedEarlier._id] } },
    { $unset: { fanOutFilters: '' } },
  );
  // A block written before the flag existed (straight to MongoDB, as an old version did).
  await collection(core.db, blocks).insertOne({
    _id: await nextSerialId(core.db, 'blocks'),
    accountId: blocker._id,
    targetAccountId: blockedEarlier._id,
    uri: null,
    createdAt: new Date(),
  });
  expect(await mayBeFiltered(core, { _id: clear._id })).toBe(false);
  expect(await flagOf(clear._id)).toBe(false);
  expect(await mayBeFiltered(core, { _id: blockedEarlier._id })).toBe(true);
  expect(await flagOf(blockedEarlier._id)).toBe(true);
});

test('a post of an author nobody filters costs no read of who does; a mute made since still keeps the next out', async () => {
  const [reader, author] = await Promise.all([user(), user()]);
  await followAccount(core, reader, author);
  await markActive(core, [reader._id, author._id], 'ok');
  const home = feedKey('home', reader._id);

  // The follow's merge into the home feed asks about this pair (owner and author): done first.
  await eventually(async () => caughtUp(core.config, 'fanout'), 30_000, 'follow merged');

  // Reads of the author's side: who blocks or mutes them (by target alone), which lists hold them.
  const filterReads: string[] = [];
  const listen = (e: CommandStartedEvent) => {
    const { find, filter = {} } = e.command as { find?: string; filter?: Record<string, unknown> };
    if (e.commandName !== 'find') return;
    const byTarget = (find === 'blocks' || find === 'mutes') && !('accountId' in filter) && 'targetAccountId' in filter;
    const byMember = find === 'list_accounts' && !('ownerId' in filter) && !('listId' in filter);
    if (byTarget || byMember) filterReads.push(find);
  };
  core.mongo.on('commandStarted', listen);
  try {
    const first = await postStatus(core, author, { text: 'nobody filters me' });
    await eventually(async () => (await feedIds(core.redis, home)).includes(first._id), 30_000, 'first post in home');
    expect(filterReads).toEqual([]);

    await muteAccount(core, reader, author);
    const second = await postStatus(core, author, { text: 'muted now' });
    // Handled: in its author's own feed, and the fan-out's offsets committed past it.
    await eventually(
      async () =>
        (await feedIds(core.redis, feedKey('home', author._id))).includes(second._id) &&
        (await caughtUp(core.config, 'fanout')),
      30_000,
      'second post handled',
    );
    expect(await feedIds(core.redis, home)).not.toContain(second._id);
    expect(filterReads).toContain('mutes');
  } finally {
    core.mongo.off('commandStarted', listen);
  }
});
