// Exactly-one-owner claims for scheduler jobs. A record (a due scheduled status, an expired poll) is
// handled in numbered attempts; whoever inserts the claim document of attempt N owns it. Only the
// unique-_id insert is used because it is atomic on real MongoDB and on the stand-in alike (the
// stand-in's conditional updates are not). A crashed owner's record is retried as attempt N+1 once
// its lease (kept on the record) ends. Claims are kept for a day so late readers of attempt N lose.
import type { Core } from '../context.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { schedulerClaims } from '../model/scheduledStatuses.ts';

const KEEP_MS = 24 * 3600_000;

/** True when this process now owns `attempt` of `ref`. */
export async function claimAttempt(core: Core, ref: string, attempt: number, owner: string): Promise<boolean> {
  try {
    await collection(core.db, schedulerClaims).insertOne({ _id: `${ref}#${attempt}`, owner, createdAt: new Date() });
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/** Forgets claims older than a day (run by the scheduler now and then). */
export async function pruneClaims(core: Core, now = new Date()): Promise<number> {
  const res = await collection(core.db, schedulerClaims).deleteMany({
    createdAt: { $lt: new Date(now.getTime() - KEEP_MS) },
  });
  return res.deletedCount;
}
