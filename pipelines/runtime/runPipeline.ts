// The event pipeline strategy on the consumer runtime (consumer.ts): a consumer group
// `<prefix>.<name>` over the pipeline's event topics and its own retry topic.
// - A failing event never blocks its partition: it is re-published to `<prefix>.<name>.retry` with
//   the time it is due (the delay from a RetryPolicy, growing). The runtime holds the retry
//   partition until its head is due. When the policy gives up (after `maxAttempts` failures), or
//   when a message cannot be decoded at all, it goes to `<prefix>.<name>.dlq` with the error in a
//   header.
// - Events arrive decoded and typed; handlers dedup by eventId where their effect is not idempotent.
import type { KafkaMessage, Message } from 'kafkajs';
import { eventCodec, EventDecodeError } from '../../schemas/codec.ts';
import { eventTopics, type EventName, type EventRecord } from '../../schemas/index.ts';
import { topicName } from '../../services/core/events/kafka.ts';
import { eventsConsumed, eventHandlerSeconds } from '../../services/core/metrics.ts';
import { EventDeduper } from './dedup.ts';
import { startConsumer, type DueBatch, type Outgoing } from './consumer.ts';
import { dueAt, failedMessage, failuresSoFar, originOf, stepRetryPolicy, type Origin } from './retry.ts';
import { traceStage, tracingStages } from '../../services/core/streaming/latencyTrace.ts';
import type { Pipeline, PipelineContext, PipelineEvent, PipelineOptions } from './types.ts';

const DEFAULT_DELAYS = [1_000, 10_000, 60_000, 300_000];

/**
 * Fetch settings of pipelines nobody waits on within a second (search index, trends, link
 * previews; not delivery planning, which a peer waits on): a fetch waits for up to 64 KB or 1 s, so a burst of posts
 * comes as one batch (one fetch, one offset commit, one read per kind) instead of a few events each.
 * (At 250 ms an idle group made four fetches a second.)
 */
export const BACKGROUND_FETCH = { maxWaitTimeInMs: 1_000, minBytes: 64 * 1024 } as const;

interface Item<N extends EventName> {
  message: KafkaMessage;
  origin: Origin;
  failures: number;
  event: PipelineEvent<N>;
}

export async function runPipeline<N extends EventName>(opts: PipelineOptions<N>): Promise<Pipeline> {
  const { core, name } = opts;
  if (!opts.handleEvent === !opts.handleBatch) throw new Error(`pipeline ${name}: give handleEvent or handleBatch`);
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`pipeline name "${name}" must be lower-case letters, digits, -`);
  const { config } = core;
  const groupId = `${config.kafkaTopicPrefix}.${name}`;
  const retryTopic = topicName(config, `${name}.retry`);
  const deadLetterTopic = topicName(config, `${name}.dlq`);
  const sourceTopics = [...new Set(opts.topics ?? opts.types.map((t) => eventTopics[t]))].map((t) =>
    topicName(config, t),
  );
  const wanted = new Set<string>(opts.types);
  const retryPolicy = stepRetryPolicy(opts.retryDelaysMs ?? DEFAULT_DELAYS, opts.maxAttempts ?? 5);
  const logger = core.logger.child({ pipeline: name });
  const codec = eventCodec();
  const dedup = new EventDeduper(core.redis, groupId);

  function toEvent(message: KafkaMessage, origin: Origin, failures: number): PipelineEvent<N> | null {
    const decoded = codec.decode(message.value ?? Buffer.alloc(0));
    if (!wanted.has(decoded.type)) return null;
    const record = decoded.record as EventRecord & { eventId: string; occurredAt: Date };
    return {
      type: decoded.type,
      eventId: record.eventId,
      occurredAt: record.occurredAt,
      key: message.key?.toString() ?? null,
      attempt: failures + 1,
      topic: origin.topic,
      partition: origin.partition,
      offset: origin.offset,
      payload: record,
    } as PipelineEvent<N>;
  }

  async function handle(items: Item<N>[], ctx: PipelineContext): Promise<Array<{ item: Item<N>; error: unknown }>> {
    const failed: Array<{ item: Item<N>; error: unknown }> = [];
    if (items.length === 0) return failed;
    const stopTimer = eventHandlerSeconds.startTimer({ pipeline: name });
    try {
      if (opts.handleBatch) {
        try {
          const outcome = await opts.handleBatch(
            items.map((i) => i.event),
            ctx,
          );
          if (outcome && outcome.failed.length > 0) {
            const byEvent = new Map(items.map((i) => [i.event, i]));
            for (const { event, error } of outcome.failed) {
              const item = byEvent.get(event);
              if (item) failed.push({ item, error });
            }
          }
          return failed;
        } catch (err) {
          logger.warn({ err, size: items.length }, 'batch failed; handling its events one by one');
        }
      }
      for (const item of items) {
        try {
          if (opts.handleEvent) await opts.handleEvent(item.event, ctx);
          else await opts.handleBatch!([item.event], ctx);
        } catch (error) {
          failed.push({ item, error });
        }
        await ctx.heartbeat();
      }
      return failed;
    } finally {
      stopTimer();
    }
  }

  // Set once the consumer has started; a batch can arrive before startConsumer returns.
  let send: PipelineContext['send'] = async () => {
    throw new Error(`pipeline ${name}: not started`);
  };

  async function eachBatch(batch: DueBatch): Promise<Outgoing[]> {
    const ctx: PipelineContext = { core, logger, dedup, heartbeat: batch.heartbeat, send: (out, c) => send(out, c) };
    const items: Item<N>[] = [];
    const retries: Message[] = [];
    const deadLetters: Message[] = [];
    const count = (topic: string, type: string, outcome: string) =>
      eventsConsumed.inc({ pipeline: name, topic, type, outcome });
    /** The retry (or, when the policy gives up, dead-letter) message of a failure. */
    const failure = (
      message: KafkaMessage,
      origin: Origin,
      failures: number,
      error: unknown,
    ): 'retried' | 'dead_lettered' => {
      const delay = retryPolicy(failures);
      if (delay === null) {
        deadLetters.push(failedMessage(message, origin, failures, error, null));
        return 'dead_lettered';
      }
      retries.push(failedMessage(message, origin, failures, error, Date.now() + delay));
      return 'retried';
    };

    for (const message of batch.messages) {
      const origin = originOf(message, { topic: batch.topic, partition: batch.partition, offset: message.offset });
      const failures = failuresSoFar(message);
      try {
        const event = toEvent(message, origin, failures);
        // Another type on a shared topic: not this pipeline's.
        if (!event) count(origin.topic, 'other', 'skipped');
        else items.push({ message, origin, failures, event });
        if (tracingStages && event?.type === 'StatusCreated') {
          const statusId = (event.payload as { statusId: string }).statusId;
          traceStage(statusId, 'kafka.timestamp', Number(message.timestamp));
          traceStage(statusId, 'consumed');
        }
      } catch (err) {
        const reason = err instanceof EventDecodeError ? err.reason : 'malformed';
        // A schema this build does not know may be known to a newer deployment: retry it.
        if (reason === 'unknown-schema') {
          const outcome = failure(message, origin, failures + 1, err);
          if (outcome === 'dead_lettered')
            logger.warn({ err, origin }, 'undecodable message sent to the dead-letter topic');
          count(origin.topic, 'unknown', outcome);
        } else {
          logger.warn({ err, origin }, 'undecodable message sent to the dead-letter topic');
          deadLetters.push(failedMessage(message, origin, failures + 1, err, null));
          count(origin.topic, 'unknown', 'dead_lettered');
        }
      }
    }

    const failed = await handle(items, ctx);
    const failedSet = new Set(failed.map((f) => f.item));
    for (const item of items) if (!failedSet.has(item)) count(item.origin.topic, item.event.type, 'ok');
    for (const { item, error } of failed) {
      const failures = item.failures + 1;
      const outcome = failure(item.message, item.origin, failures, error);
      const where = { err: error, eventId: item.event.eventId, type: item.event.type, failures };
      if (outcome === 'dead_lettered') logger.error(where, 'event dead-lettered');
      else logger.warn(where, 'event will be retried');
      count(item.origin.topic, item.event.type, outcome);
    }
    return [
      { topic: retryTopic, messages: retries, eventType: 'failed' },
      { topic: deadLetterTopic, messages: deadLetters, eventType: 'failed' },
    ];
  }

  const held = new Map([[retryTopic, dueAt]]);
  const outputs = opts.outputTopics?.map((o) => ({ ...o, topic: topicName(config, o.topic) }));
  if (opts.shared) {
    // In a consumer shared with other pipelines of this process (ADR 0013): same handling, one fetch.
    const membership = opts.shared.join({
      name,
      topics: [...sourceTopics, retryTopic],
      held,
      outputs: [...(outputs ?? []), { topic: retryTopic }, { topic: deadLetterTopic }],
      eachBatch,
    });
    send = membership.send;
    return {
      name,
      groupId: opts.shared.groupId,
      retryTopic,
      deadLetterTopic,
      ...membership,
    };
  }
  const consumer = await startConsumer({
    core,
    name,
    logger,
    topics: [...sourceTopics, retryTopic],
    held,
    outputs,
    partitions: config.kafkaPartitions,
    fromBeginning: opts.fromBeginning,
    sessionTimeout: opts.sessionTimeout,
    heartbeatInterval: opts.heartbeatInterval,
    maxWaitTimeInMs: opts.maxWaitTimeInMs,
    minBytes: opts.minBytes,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently,
    lagIntervalMs: opts.lagIntervalMs,
    eachBatch,
  });
  send = (out, compression) => consumer.send(out, compression);

  let stopped: Promise<void> | undefined;
  return {
    name,
    groupId,
    retryTopic,
    deadLetterTopic,
    lag: () => consumer.lag(),
    stop() {
      stopped ??= (async () => {
        await consumer.stop();
        logger.info('pipeline stopped');
      })();
      return stopped;
    },
  };
}
