// The 410 side effect: a 410 Gone from a follower's personal inbox means that account is gone, so
// its follow of the signer ends (as Mastodon does).
import type { Core } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { endFollow } from '../../services/core/graph/unfollow.ts';
import type { DeliveryRequested } from '../../schemas/index.ts';

export async function followerGone(core: Core, job: DeliveryRequested): Promise<void> {
  if (!job.recipientAccountId || !job.signerAccountId) return;
  const follower = await collection(core.db, accounts).findOne(
    { _id: BigInt(job.recipientAccountId), domain: { $ne: null } },
    { projection: { _id: 1, domain: 1 } },
  );
  if (!follower) return;
  const followed = { _id: BigInt(job.signerAccountId), domain: null };
  await endFollow(core, follower, followed, 'UNFOLLOW', follower);
}
