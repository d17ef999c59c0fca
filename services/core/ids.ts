// Identifiers. Status ids are time-based like Mastodon's: the top 48 bits are milliseconds since the
// epoch, the bottom 16 bits a sequence within that millisecond. The sequence comes from a Redis
// counter per millisecond, so any number of API processes get unique ids without talking to each other.
// Every other resource takes a serial id from a MongoDB counter document.
import type { Db } from 'mongodb';
import type { Redis } from './db/redis.ts';
import { defineCollection, collection } from './db/mongo.ts';

export type Id = bigint;

const counters = defineCollection<{ _id: string; seq: bigint }>('counters');

export function statusIdTimestamp(id: Id): Date {
  return new Date(Number(id >> 16n));
}

/** The smallest status id at a given time: a cursor for "statuses since T". */
export function statusIdFloor(at: Date): Id {
  return BigInt(at.getTime()) << 16n;
}

export class StatusIdGenerator {
  private readonly redis: Redis;
  constructor(redis: Redis) {
    this.redis = redis;
  }

  /** A fresh id for a status created now (or at `at`, for remote statuses published earlier). */
  async next(at: Date = new Date()): Promise<Id> {
    for (;;) {
      const ms = at.getTime();
      const key = `ids:status:${ms}`;
      const [[, seq]] = (await this.redis.multi().incr(key).pexpire(key, 10_000).exec()) as [[Error | null, number]];
      if (seq <= 0xffff) return (BigInt(ms) << 16n) | BigInt(seq - 1);
      // 65,536 ids in one millisecond: move to the next one.
      at = new Date(ms + 1);
    }
  }
}

/** Next serial id of a named sequence (one per resource kind). */
export async function nextSerialId(db: Db, sequence: string): Promise<Id> {
  const doc = await collection(db, counters).findOneAndUpdate(
    { _id: sequence },
    { $inc: { seq: 1n } },
    { upsert: true, returnDocument: 'after' },
  );
  if (!doc) throw new Error(`counter ${sequence} did not return a value`);
  return BigInt(doc.seq);
}

/** Parses a REST id parameter; null when it is not a positive 64-bit integer. */
export function parseId(value: unknown): Id | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const s = String(value);
  if (!/^\d{1,20}$/.test(s)) return null;
  const n = BigInt(s);
  return n > 0n && n < 1n << 63n ? n : null;
}
