// The no-loss path from a MongoDB write to a Kafka event (transactional-outbox style, without
// transactions, which the MongoDB-wire stand-in lacks):
//   1. the event is recorded as `pending` in `outbox`, together with how to verify its write;
//   2. the caller's write runs;
//   3. the event is published and its outbox record removed.
// A process killed after 1 leaves a pending record. The relay (`relayPending`) picks records up
// after a grace period, checks the verification (did the write land?) and publishes them, or drops
// them when the write never happened. Publishing is at-least-once; consumers dedup by eventId.
import { randomUUID } from 'node:crypto';
import { BSON } from 'mongodb';
import type { Db, Document } from 'mongodb';
const { EJSON } = BSON;
import type { Logger } from '../logger.ts';
import { defineCollection, collection, outboxCarriers, type CollectionDef } from '../db/mongo.ts';
import type { EventName, EventPayload } from '../../../schemas/index.ts';
import { eventCodec } from '../../../schemas/codec.ts';
import { traceStage, tracingStages } from '../streaming/latencyTrace.ts';
import { Coalescer } from './coalesce.ts';

/** How the relay decides whether the write of a pending event happened. */
export interface Verification {
  collection: string;
  filter: Document;
  expect: 'exists' | 'absent';
}

/** The verification of a write that creates (`created`) or deletes what `filter` matches in `collection`. */
export function writeVerification(collection: string, filter: Document, created: boolean): Verification {
  return { collection, filter, expect: created ? 'exists' : 'absent' };
}

export interface NewEvent<N extends EventName = EventName> {
  type: N;
  /** Kafka message key: events with one key stay in order (e.g. a status's author id). */
  key: string;
  payload: EventPayload<N>;
  verify: Verification;
}

export interface OutboxEvent {
  eventId: string;
  type: EventName;
  key: string;
  occurredAt: Date;
  payload: Record<string, unknown>;
}

/** Where events go: the Kafka producer with the Avro codec (see core/events/kafkaSink.ts). */
export interface EventSink {
  publish(events: OutboxEvent[]): Promise<void>;
}

interface OutboxDoc {
  _id: string;
  type: string;
  key: string;
  occurredAt: Date;
  /** JSON text: payloads are Avro-shaped and may hold keys the stand-in cannot store. */
  payload: string;
  /** EJSON text of the Verification (filters hold `$` operators, which are not storable as keys). */
  verify: string;
  leaseUntil: Date;
  attempts: number;
}

const outboxCollection = defineCollection<OutboxDoc>('outbox', [{ key: { leaseUntil: 1 }, name: 'lease' }]);

/**
 * The outbox records an insert carries in its own document (writeCarried): they land with it, in
 * one command and one commit, and are unset once published. Until then the relay finds them by
 * `outbox.leaseUntil` in the collections declared `carriesOutbox`.
 */
export interface CarriedOutbox {
  leaseUntil: Date;
  attempts: number;
  records: StoredRecord[];
}

type StoredRecord = Pick<OutboxDoc, '_id' | 'type' | 'key' | 'occurredAt' | 'payload'>;

/** An event as stored (in an outbox document or carried by the inserted one); fromStored undoes it. */
function toStored(r: OutboxEvent): StoredRecord {
  return { _id: r.eventId, type: r.type, key: r.key, occurredAt: r.occurredAt, payload: JSON.stringify(r.payload) };
}

/** The event of a stored record (an outbox document's or a carried one), for the relay to publish. */
function fromStored(r: StoredRecord): OutboxEvent {
  return {
    eventId: r._id,
    type: r.type as EventName,
    key: r.key,
    occurredAt: r.occurredAt,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
  };
}

/** How long published records wait to be removed together (the relay's grace is far longer). */
const REMOVAL_LINGER_MS = 50;

export function eventId(): string {
  return randomUUID();
}

function traceStatuses(records: OutboxEvent[], stage: string): void {
  for (const r of records) if (r.type === 'StatusCreated') traceStage(String(r.payload.statusId), stage);
}

export class Outbox {
  private readonly db: Db;
  private readonly sink: EventSink;
  private readonly logger: Logger;
  /** How long after recording a pending event the relay may take it over. */
  readonly graceMs: number;
  /** publishDirect's events: concurrent callers share sends. */
  private readonly direct: Coalescer<OutboxEvent>;
  /**
   * write()'s three steps, each shared by concurrent writers (ADR 0009): one insert of every
   * waiting record, one Kafka send of every written event, one delete of every published record.
   */
  private readonly recording: Coalescer<OutboxDoc>;
  private readonly publishing: Coalescer<OutboxEvent>;
  private readonly removing: Coalescer<string>;
  /** Per carrying collection: the unsetting of published carried records, shared like `removing`. */
  private readonly unsetting = new Map<string, Coalescer<unknown>>();
  /** Removals not yet done (awaited by flush()). */
  private removals = new Set<Promise<void>>();

  constructor(db: Db, sink: EventSink, logger: Logger, graceMs = 30_000) {
    this.db = db;
    this.sink = sink;
    this.logger = logger;
    this.graceMs = graceMs;
    this.direct = new Coalescer((events) => this.sink.publish(events));
    this.publishing = new Coalescer((events) => this.sink.publish(events));
    this.recording = new Coalescer(async (docs) => {
      await collection(this.db, outboxCollection).insertMany(docs, { ordered: false });
    });
    // Nobody waits on a removal: it lingers, so that one delete carries the records of many posts.
    this.removing = new Coalescer(
      async (ids) => {
        await collection(this.db, outboxCollection).deleteMany({ _id: { $in: ids } });
      },
      { lingerMs: REMOVAL_LINGER_MS },
    );
  }

  /** Waits for the removals of published records still under way (before a process closes). */
  async flush(): Promise<void> {
    await Promise.all([...this.removals]);
  }

  /**
   * Runs `apply` (the MongoDB write) with its events recorded first and published after.
   * `apply` receives the event ids, e.g. to store them on the written document for verification.
   */
  async write<T>(events: NewEvent[], apply: (eventIds: string[]) => Promise<T>): Promise<T> {
    const now = new Date();
    const records = this.recordsOf(events, now);
    if (records.length > 0) {
      await this.recording.add(
        records.map((r, i) => ({
          ...toStored(r),
          verify: EJSON.stringify(events[i].verify, { relaxed: false }),
          leaseUntil: new Date(now.getTime() + this.graceMs),
          attempts: 0,
        })),
      );
    }
    const result = await apply(records.map((r) => r.eventId));
    if (tracingStages) traceStatuses(records, 'written');
    if (records.length > 0 && (await this.published(records)))
      this.removeLater(
        records,
        this.removing,
        records.map((r) => r.eventId),
      );
    if (tracingStages) traceStatuses(records, 'produced');
    return result;
  }

  /** The events' records, each checked against its schema (a payload it rejects fails here, before anything is written). */
  private recordsOf(events: Array<Omit<NewEvent, 'verify'>>, now: Date): OutboxEvent[] {
    const records: OutboxEvent[] = events.map((e) => ({
      eventId: eventId(),
      type: e.type,
      key: e.key,
      occurredAt: now,
      payload: e.payload as unknown as Record<string, unknown>,
    }));
    for (const r of records)
      eventCodec().encode(r.type, { ...r.payload, eventId: r.eventId, occurredAt: r.occurredAt });
    return records;
  }

  private unsettingOf(name: string): Coalescer<unknown> {
    let c = this.unsetting.get(name);
    if (!c) {
      // The raw collection: the unset changes no field a cached view holds, so nothing is dropped.
      c = new Coalescer(
        async (ids) => {
          await this.db.collection(name).updateMany({ _id: { $in: ids } } as Document, { $unset: { outbox: '' } });
        },
        { lingerMs: REMOVAL_LINGER_MS },
      );
      this.unsetting.set(name, c);
    }
    return c;
  }

  /**
   * write() for events whose write is the insert of one document into a collection declared
   * `carriesOutbox`: `insert` stores the records in the document's `outbox` field, so no outbox
   * record of their own is written first, and none is left by an insert that failed. Published,
   * they are unset from the document (lingering, shared, not waited for). `alongside`: what follows
   * the insert and needs nothing of the publish (the post's counters), done while it is under way:
   * the caller waits for the longer of the two instead of both in turn.
   */
  async writeCarried<T>(
    events: Array<Omit<NewEvent, 'verify'>>,
    carrier: CollectionDef<Document>,
    docId: unknown,
    insert: (outbox: CarriedOutbox) => Promise<T>,
    alongside?: (inserted: T) => Promise<void>,
  ): Promise<T> {
    if (!carrier.carriesOutbox) throw new Error(`${carrier.name} is not declared carriesOutbox`);
    const now = new Date();
    const records = this.recordsOf(events, now);
    const result = await insert({
      leaseUntil: new Date(now.getTime() + this.graceMs),
      attempts: 0,
      records: records.map(toStored),
    });
    if (tracingStages) traceStatuses(records, 'written');
    // `published` never rejects (a failed send is left to the relay): waited for even when
    // `alongside` fails, so that nothing of this write is still under way when the caller hears.
    const publishing = this.published(records).then((ok) => {
      if (ok) this.removeLater(records, this.unsettingOf(carrier.name), [docId]);
      if (tracingStages) traceStatuses(records, 'produced');
    });
    try {
      await alongside?.(result);
    } finally {
      await publishing;
    }
    return result;
  }

  /**
   * Publishes events that have no MongoDB write behind them and carry their whole state (an
   * inbound ActivityPub activity): straight to the sink, no outbox record. A failure is the
   * caller's to report (the inbox answers 503 and the sender retries). Concurrent callers' events
   * leave in one send; each call resolves once its events are acknowledged.
   */
  async publishDirect<N extends EventName>(events: Array<Omit<NewEvent<N>, 'verify'>>): Promise<void> {
    const now = new Date();
    await this.direct.add(
      events.map((e) => ({
        eventId: eventId(),
        type: e.type,
        key: e.key,
        occurredAt: now,
        payload: e.payload as unknown as Record<string, unknown>,
      })),
    );
  }

  /** Publishes written events now; false when that failed and the relay will, once their lease runs out. */
  private async published(records: OutboxEvent[]): Promise<boolean> {
    try {
      await this.publishing.add(records);
      return true;
    } catch (err) {
      this.logger.warn({ err, eventIds: records.map((r) => r.eventId) }, 'event publish deferred to the outbox relay');
      return false;
    }
  }

  /**
   * Removes published records without the caller waiting: a record left behind (a crash, a failed
   * delete) is published once more by the relay, which consumers dedup by eventId.
   */
  private removeLater<K>(records: OutboxEvent[], removing: Coalescer<K>, keys: K[]): void {
    const removal = removing.add(keys).catch((err: unknown) => {
      this.logger.warn(
        { err, eventIds: records.map((r) => r.eventId) },
        'published outbox records not removed; the relay will',
      );
    });
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
  }

  /**
   * Publishes (or drops) pending events whose lease ran out. Safe to run in many processes at
   * once: each record is claimed with a fresh lease before it is handled. Returns how many it published.
   */
  async relayPending(limit = 100): Promise<number> {
    const coll = collection(this.db, outboxCollection);
    let published = 0;
    for (let i = 0; i < limit; i++) {
      const now = new Date();
      const claimed = await coll.findOneAndUpdate(
        { leaseUntil: { $lte: now } },
        { $set: { leaseUntil: new Date(now.getTime() + this.graceMs) }, $inc: { attempts: 1 } },
        { sort: { leaseUntil: 1 }, returnDocument: 'after' },
      );
      if (!claimed) break;
      const verify = EJSON.parse(claimed.verify, { relaxed: false }) as Verification;
      const found = await this.db.collection(verify.collection).findOne(verify.filter, { projection: { _id: 1 } });
      const happened = verify.expect === 'exists' ? found !== null : found === null;
      if (!happened) {
        this.logger.info({ eventId: claimed._id, type: claimed.type }, 'outbox: write never happened, event dropped');
        await coll.deleteOne({ _id: claimed._id });
        continue;
      }
      try {
        await this.sink.publish([fromStored(claimed)]);
      } catch (err) {
        this.logger.warn({ err, eventId: claimed._id }, 'outbox relay: publish failed, will retry');
        break;
      }
      await coll.deleteOne({ _id: claimed._id });
      published++;
    }
    for (const carrier of outboxCarriers()) published += await this.relayCarried(carrier.name, limit - published);
    return published;
  }

  /** relayPending for the records carried by documents of `name` (writeCarried): their inserts happened. */
  private async relayCarried(name: string, limit: number): Promise<number> {
    // The raw collection, as for the unset: the lease is no field a cached view holds.
    const coll = this.db.collection<{ _id: unknown; outbox?: CarriedOutbox }>(name);
    let published = 0;
    while (published < limit) {
      const now = new Date();
      const claimed = await coll.findOneAndUpdate(
        { 'outbox.leaseUntil': { $lte: now } },
        { $set: { 'outbox.leaseUntil': new Date(now.getTime() + this.graceMs) }, $inc: { 'outbox.attempts': 1 } },
        { sort: { 'outbox.leaseUntil': 1 }, projection: { outbox: 1 }, returnDocument: 'after' },
      );
      if (!claimed?.outbox) break;
      const records = claimed.outbox.records;
      try {
        await this.sink.publish(records.map(fromStored));
      } catch (err) {
        this.logger.warn({ err, eventIds: records.map((r) => r._id) }, 'outbox relay: publish failed, will retry');
        break;
      }
      await coll.updateOne({ _id: claimed._id }, { $unset: { outbox: '' } });
      published += records.length;
    }
    return published;
  }
}
