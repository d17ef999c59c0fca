// Identifiers. Status ids are time-based like Mastodon's: the top 48 bits are milliseconds since the
// epoch, the bottom 16 bits a sequence within that millisecond. The sequence comes from a Redis
// counter per millisecond, so any number of API processes get unique ids without talking to each other.
// Every other resource takes a serial id from a MongoDB counter document.
import type { Db } from 'mongodb';
import { incrementExpiring, type Redis } from './db/redis.ts';
import { defineCollection, collection, isDuplicateKeyError } from './db/mongo.ts';

export type Id = bigint;

const counters = defineCollection<{ _id: string; seq: bigint }>('counters');
const serialClaims = defineCollection<{ _id: string }>('serial_claims');

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
    if (at.getTime() < Date.now() - PAST_AFTER_MS) return this.past(at);
    for (;;) {
      const ms = at.getTime();
      const key = `ids:status:${ms}`;
      const seq = await incrementExpiring(this.redis, key, 10_000);
      if (seq <= 0xffff) return (BigInt(ms) << 16n) | BigInt(seq - 1);
      // 65,536 ids in one millisecond: move to the next one.
      at = new Date(ms + 1);
    }
  }

  /**
   * An id at a past time (a remote status's `published`). Remote posts share published
   * milliseconds (many servers send whole seconds) and arrive minutes apart, after a
   * per-millisecond counter has expired and would start at 0 again (the ingress benchmark lost
   * half its posts to that). So the low 16 bits come from one long-lived counter, as Mastodon's
   * snowflake takes them from a database sequence: ids at one millisecond repeat only 65,536
   * statuses apart. Callers that insert check the id is free (`freeStatusIds`).
   */
  private async past(at: Date): Promise<Id> {
    const seq = await this.redis.incr('ids:status:past');
    return (BigInt(at.getTime()) << 16n) | BigInt(seq % 65_536);
  }
}

/** Times this far back get `past` ids. */
const PAST_AFTER_MS = 2_000;

/**
 * Next serial id of a named sequence (one per resource kind).
 * The counter's `$inc` gives a candidate; a unique claim document makes it ours. On real MongoDB
 * and the embedded default the `$inc` is atomic and the claim always succeeds; a server whose
 * concurrent updates are not atomic (FerretDB 1.x, the previous default) can give two callers one
 * candidate: the claim's unique `_id` lets only one keep it and the other takes the next.
 */
export async function nextSerialId(db: Db, sequence: string): Promise<Id> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    let doc;
    try {
      doc = await collection(db, counters).findOneAndUpdate(
        { _id: sequence },
        { $inc: { seq: 1n } },
        { upsert: true, returnDocument: 'after' },
      );
    } catch (err) {
      // Two first-ever upserts of one counter race on its _id: the loser tries again.
      if (isDuplicateKeyError(err)) continue;
      throw err;
    }
    if (!doc) throw new Error(`counter ${sequence} did not return a value`);
    const id = BigInt(doc.seq);
    try {
      await collection(db, serialClaims).insertOne({ _id: `${sequence}:${id}` });
      return id;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
  throw new Error(`counter ${sequence}: no free id after 1000 attempts`);
}

/** Parses a REST id parameter; null when it is not a positive 64-bit integer. */
export function parseId(value: unknown): Id | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const s = String(value);
  if (!/^\d{1,20}$/.test(s)) return null;
  const n = BigInt(s);
  return n > 0n && n < 1n << 63n ? n : null;
}

/**
 * `count` serial ids of a named sequence in two round trips (one `$inc` by `count`, one batch of
 * claims), for writers that create many documents at once. Ids another caller claimed first (only
 * on servers without atomic `$inc`) are replaced one by one.
 */
export async function nextSerialIds(db: Db, sequence: string, count: number): Promise<Id[]> {
  if (count <= 0) return [];
  if (count === 1) return [await nextSerialId(db, sequence)];
  const doc = await collection(db, counters).findOneAndUpdate(
    { _id: sequence },
    { $inc: { seq: BigInt(count) } },
    { upsert: true, returnDocument: 'after' },
  );
  if (!doc) throw new Error(`counter ${sequence} did not return a value`);
  const last = BigInt(doc.seq);
  const candidates = Array.from({ length: count }, (_, i) => last - BigInt(count - 1 - i));
  const ids: Id[] = [];
  try {
    await collection(db, serialClaims).insertMany(
      candidates.map((id) => ({ _id: `${sequence}:${id}` })),
      { ordered: false },
    );
    return candidates;
  } catch (err) {
    const failed = new Set(
      ((err as { writeErrors?: Array<{ index: number; code?: number }> }).writeErrors ?? []).map((e) => {
        if (e.code !== 11000) throw err;
        return e.index;
      }),
    );
    if (failed.size === 0) throw err;
    for (const [i, id] of candidates.entries()) ids.push(failed.has(i) ? await nextSerialId(db, sequence) : id);
    return ids;
  }
}
