// A new follow merges the author's recent statuses into the follower's home feed, filtered as
// Mastodon's merge_into_home filters: nothing of an author the follower mutes or blocks, or who
// blocks the follower, or who sits in one of the follower's exclusive lists. A rebuilt home feed
// leaves out the same authors.
import type { Core } from '../../../services/core/context.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { blockAccount } from '../../../services/core/graph/block.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { muteAccount } from '../../../services/core/graph/mute.ts';
import { addListMembers, createList } from '../../../services/core/lists/lists.ts';
import { feedIds, feedKey } from '../../../services/core/feeds/feeds.ts';
import { mergeIntoHomeFeed, regenerateHomeFeed } from '../../../services/core/feeds/maintenance.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let core: Core;

beforeAll(async () => {
  ({ core } = await createTestCore());
});

afterAll(async () => {
  await closeTestCore(core);
});

const account = async () => (await createTestUser(core)).account as AccountDoc;

type Relate = (follower: AccountDoc, author: AccountDoc) => Promise<unknown>;

test.each<{ between: string; relate: Relate; merged: boolean }>([
  { between: 'nothing', relate: async () => undefined, merged: true },
  { between: 'a mute by the follower', relate: (f, a) => muteAccount(core, f, a), merged: false },
  { between: 'a block by the follower', relate: (f, a) => blockAccount(core, f, a), merged: false },
  { between: 'a block by the author', relate: (f, a) => blockAccount(core, a, f), merged: false },
  {
    between: 'the follower’s exclusive list holding the author',
    relate: async (f, a) => {
      await followAccount(core, f, a);
      await addListMembers(core, await createList(core, f, { title: 'x', exclusive: true }), [a._id]);
    },
    merged: false,
  },
])('with $between between them: merged $merged', async ({ relate, merged }) => {
  const [follower, author] = [await account(), await account()];
  const status = await postStatus(core, author, { text: 'before the follow' });
  await relate(follower, author);
  await mergeIntoHomeFeed(core, follower._id, author._id);
  expect(await feedIds(core.redis, feedKey('home', follower._id))).toEqual(merged ? [status._id] : []);
});

test('a rebuilt home feed leaves out the members of exclusive lists, not of the other lists', async () => {
  const [owner, listed, included] = [await account(), await account(), await account()];
  await followAccount(core, owner, listed);
  await followAccount(core, owner, included);
  await addListMembers(core, await createList(core, owner, { title: 'work', exclusive: true }), [listed._id]);
  await addListMembers(core, await createList(core, owner, { title: 'friends', exclusive: false }), [included._id]);
  const own = await postStatus(core, owner, { text: 'mine' });
  await postStatus(core, listed, { text: 'work stuff' });
  const shown = await postStatus(core, included, { text: 'friendly' });
  await regenerateHomeFeed(core, owner._id);
  expect(await feedIds(core.redis, feedKey('home', owner._id))).toEqual([shown._id, own._id]);
});
