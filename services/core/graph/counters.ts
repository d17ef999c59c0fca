// followers_count / following_count. Each change follows a write that only one concurrent caller
// can win (a unique-index insert, or a delete that reports what it removed), and $inc is atomic on
// MongoDB and on the embedded server, so the counts stay true under concurrent follows/unfollows.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';

export async function adjustFollowCounts(core: Core, followerId: Id, followedId: Id, delta: 1 | -1): Promise<void> {
  const coll = collection(core.db, accounts);
  await Promise.all([
    coll.updateOne({ _id: followerId }, { $inc: { followingCount: delta } }),
    coll.updateOne({ _id: followedId }, { $inc: { followersCount: delta } }),
  ]);
}
