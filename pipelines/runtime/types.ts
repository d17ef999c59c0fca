// What a pipeline sees: decoded, typed events and the handler signatures.
import type { Core } from '../../services/core/context.ts';
import type { Logger } from '../../services/core/logger.ts';
import type { EventName, EventRecord, EventTopic } from '../../schemas/index.ts';
import type { CompressionTypes } from 'kafkajs';
import type { EventDeduper } from './dedup.ts';
import type { Outgoing } from './consumer.ts';
import type { SharedConsumer } from './sharedConsumer.ts';

interface EventEnvelope {
  eventId: string;
  occurredAt: Date;
  /** The Kafka message key (the producer's ordering key). */
  key: string | null;
  /** 1 on first delivery, then counts retries from the retry topic. */
  attempt: number;
  /** Where the event was read from (the original topic, also for retried events). */
  topic: string;
  partition: number;
  offset: string;
}

/** A decoded event; a union over `N`, so `switch (event.type)` narrows `payload`. */
export type PipelineEvent<N extends EventName = EventName> = {
  [K in N]: EventEnvelope & { type: K; payload: EventRecord<K> };
}[N];

export interface PipelineContext {
  core: Core;
  logger: Logger;
  /** Redis-backed once-only execution by eventId, for effects that are not idempotent themselves. */
  dedup: EventDeduper;
  /** Keep the group membership alive during long work. */
  heartbeat(): Promise<void>;
  /** Publishes through the pipeline's producer (acks=all), to topics named in `outputTopics`. */
  send(out: readonly Outgoing[], compression?: CompressionTypes): Promise<void>;
}

export type EventHandler<N extends EventName> = (event: PipelineEvent<N>, ctx: PipelineContext) => Promise<void>;
/** What a batch handler may report: the events that failed (each goes to the retry topic alone). */
export interface BatchOutcome<N extends EventName> {
  failed: Array<{ event: PipelineEvent<N>; error: unknown }>;
}

export type BatchHandler<N extends EventName> = (
  events: PipelineEvent<N>[],
  ctx: PipelineContext,
) => Promise<void | BatchOutcome<N>>;

export interface PipelineOptions<N extends EventName> {
  core: Core;
  /** Consumer group `<prefix>.<name>`; also names the retry and dead-letter topics. */
  name: string;
  /** Event types the pipeline handles; other events on its topics are acknowledged and skipped. */
  types: readonly N[];
  /** Coarse topics to read (default: the topics of `types`). */
  topics?: readonly EventTopic[];
  /** Topics (without the prefix) the handlers publish to with `ctx.send`, created at start. */
  outputTopics?: ReadonlyArray<{ topic: string; partitions?: number }>;
  /** One event at a time (simple) ... */
  handleEvent?: EventHandler<N>;
  /**
   * ... or a whole fetched batch (fast). When a batch throws, its events are handled again one by
   * one; a handler that isolates failures itself returns the failed events instead.
   */
  handleBatch?: BatchHandler<N>;
  /** Handler attempts before an event goes to the dead-letter topic (default 5). */
  maxAttempts?: number;
  /** Delay before retry 1, 2, ... (the last repeats). Default 1 s, 10 s, 1 min, 5 min. */
  retryDelaysMs?: readonly number[];
  /** A new group starts at the earliest offset (default) so no event published before it is missed. */
  fromBeginning?: boolean;
  /** How often the consumer lag gauge is refreshed (default 15 s; 0 turns it off). */
  lagIntervalMs?: number;
  /** kafkajs consumer tuning (tests shorten these). */
  sessionTimeout?: number;
  heartbeatInterval?: number;
  maxWaitTimeInMs?: number;
  /**
   * The broker answers a fetch once it has this many bytes or maxWaitTimeInMs passed (default 1:
   * at once). Background pipelines ask for more: fewer fetches and offset commits per event.
   */
  minBytes?: number;
  partitionsConsumedConcurrently?: number;
  /**
   * Read through this consumer, shared with other pipelines of the process (ADR 0013), instead of
   * a group of its own; the fetch settings above are then the shared consumer's.
   */
  shared?: SharedConsumer;
}

/** What a caller of a pipeline's run function may set: the options its module does not fix itself. */
export type PipelineOverrides<N extends EventName> = Partial<
  Omit<PipelineOptions<N>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

export interface Pipeline {
  readonly name: string;
  readonly groupId: string;
  readonly retryTopic: string;
  readonly deadLetterTopic: string;
  /** Total consumer lag over the pipeline's partitions (committed offset to end). */
  lag(): Promise<number>;
  /** Finishes the in-flight batch, commits, leaves the group and disconnects. */
  stop(): Promise<void>;
}
