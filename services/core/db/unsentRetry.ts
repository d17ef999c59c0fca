// Retrying a MongoDB write that never reached the server. A denormalised counter updated after
// its document was written (a status and its author's statuses_count) drifts when that update
// fails while MongoDB restarts; MongoDB-wire offers no retryable writes. Retrying is safe only
// when the command was never sent: no server could be selected, or the connection was refused.
import { MongoServerSelectionError } from 'mongodb';

/** True when the error shows that the command never reached MongoDB. */
export function neverSent(err: unknown): boolean {
  if (err instanceof MongoServerSelectionError) return true;
  return err instanceof Error && /\bECONNREFUSED\b/.test(err.message);
}

/** Runs `write`, again after `delaysMs[i]` each time it fails without having reached MongoDB. */
export async function retryUnsent<T>(
  write: () => Promise<T>,
  delaysMs: readonly number[] = [1_000, 3_000, 6_000],
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= delaysMs.length || !neverSent(err)) throw err;
      await new Promise((r) => setTimeout(r, delaysMs[attempt]));
    }
  }
}
