// Denormalised counters changed once per cause, even when the write is retried. A counter write
// follows its document's (a status, then its author's statuses_count) and MongoDB-wire has no
// transactions: when MongoDB restarts under the counter write, the driver cannot tell whether it
// was applied. Each change carries a mark naming its cause, kept on the counted document (the last
// COUNT_MARKS_KEPT), and applies only where the mark is absent, in the same single-document update:
// so a write in doubt is simply sent again until MongoDB answers.
import { MongoNetworkError, MongoServerSelectionError, type AnyBulkWriteOperation, type Collection } from 'mongodb';
import type { Id } from '../ids.ts';

/** Marks kept per document: far more than the changes of one document that can be in doubt at once. */
export const COUNT_MARKS_KEPT = 32;

export interface CountChange {
  _id: Id;
  /** The counters' increments (negative to decrement). */
  inc: Record<string, number>;
  /** Fields set with them. */
  set?: Record<string, unknown>;
  /** Fields raised to at least this value with them (e.g. `lastStatusAt`: an older cause never moves it back). */
  max?: Record<string, unknown>;
  /** Names the cause, e.g. `s+<status id>`: the same change retried carries the same mark. */
  mark: string;
}

/** A document that takes counted changes. */
export interface Counted {
  /** The marks of the latest counted changes (countOnce.ts). */
  countMarks?: string[];
}

/** True when the error leaves a write's fate unknown or unsent: the connection, not the command, failed. */
export function connectionFailed(err: unknown): boolean {
  if (err instanceof MongoServerSelectionError || err instanceof MongoNetworkError) return true;
  return err instanceof Error && /\bECONNREFUSED\b|\bECONNRESET\b/.test(err.message);
}

/** How long a counter write keeps trying through a MongoDB restart (whole again in 10-20 s). */
export const COUNT_RETRY_DELAYS_MS: readonly number[] = [500, 1_000, 2_000, 4_000, 8_000, 8_000];

/**
 * Applies each change once (by its mark), retrying while MongoDB cannot be reached. Resolves true
 * when the first attempt changed every document (none had the mark yet), so that the caller knows
 * what each document became (countedCopy).
 */
export async function countOnce<T extends Counted & { _id: Id }>(
  coll: Collection<T>,
  changes: readonly CountChange[],
  delaysMs: readonly number[] = COUNT_RETRY_DELAYS_MS,
): Promise<boolean> {
  if (changes.length === 0) return true;
  const ops = changes.map(
    (c) =>
      ({
        updateOne: {
          filter: { _id: c._id, countMarks: { $ne: c.mark } },
          update: {
            $inc: c.inc,
            ...(c.set ? { $set: c.set } : {}),
            ...(c.max ? { $max: c.max } : {}),
            $push: { countMarks: { $each: [c.mark], $slice: -COUNT_MARKS_KEPT } },
          },
        },
      }) as unknown as AnyBulkWriteOperation<T>,
  );
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await coll.bulkWrite(ops, { ordered: false });
      return attempt === 0 && result.matchedCount === ops.length && result.modifiedCount === ops.length;
    } catch (err) {
      if (attempt >= delaysMs.length || !connectionFailed(err)) throw err;
      await new Promise((r) => setTimeout(r, delaysMs[attempt]));
    }
  }
}

/**
 * The document after `change`, from a copy taken around the time it was written; null when the
 * copy cannot be shown to be from before the write. Only a change that raises a `max` field shows
 * it: a copy read after the write has that field at or above the value, one from before below it.
 */
export function countedCopy<T extends object>(change: CountChange, copy: T): T | null {
  const raised = Object.entries(change.max ?? {});
  const fields = copy as Record<string, unknown>;
  const below = (v: unknown, than: unknown) => v === null || v === undefined || (v as number) < (than as number);
  if (raised.length === 0 || !raised.every(([k, v]) => below(fields[k], v))) return null;
  const after: Record<string, unknown> = { ...fields, ...change.set, ...change.max };
  for (const [k, by] of Object.entries(change.inc)) after[k] = ((fields[k] as number | undefined) ?? 0) + by;
  return after as T;
}
