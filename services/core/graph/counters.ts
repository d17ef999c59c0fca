// followers_count / following_count. Each change follows a write that only one concurrent caller
// can win (a unique-index insert, or a delete that reports what it removed), and $inc is atomic on
// MongoDB and on the embedded server, so the counts stay true under concurrent follows/unfollows;
// each change is marked by its follow, so one sent again through a MongoDB restart counts once.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { countOnce, type CountChange } from '../db/countOnce.ts';
import { accounts } from '../model/accounts.ts';

/** Both sides' counters of follows made (1) or ended (-1), in one bulk write. */
export async function adjustFollowCounts(
  core: Core,
  changed: ReadonlyArray<{ _id: Id; accountId: Id; targetAccountId: Id }>,
  delta: 1 | -1,
): Promise<void> {
  const sign = delta > 0 ? '+' : '-';
  await countOnce(
    collection(core.db, accounts),
    changed.flatMap((f): CountChange[] => [
      { _id: f.accountId, inc: { followingCount: delta }, mark: `f${sign}${f._id}` },
      { _id: f.targetAccountId, inc: { followersCount: delta }, mark: `f${sign}${f._id}` },
    ]),
  );
}
