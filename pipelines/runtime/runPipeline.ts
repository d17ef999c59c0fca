// The consumer runtime every pipeline runs on: a kafkajs consumer group `<prefix>.<name>` over the
// pipeline's event topics and its own retry topic.
// - At-least-once: offsets are committed only after the events before them were handled (or
//   handed to the retry/dead-letter topic, acks=all), so a crash re-delivers, never skips.
// - A failing event never blocks its partition: it is re-published to `<prefix>.<name>.retry` with
//   the time it is due (growing delays). The retry partition is paused until its head is due, with
//   heartbeats going on, so neither other partitions nor the group membership wait on it. After
//   `maxAttempts` failures, or when it cannot be decoded at all, the message goes to
//   `<prefix>.<name>.dlq` with the error in a header.
// - Events arrive decoded and typed; handlers dedup by eventId where their effect is not idempotent.
import { Partitions } from './partitions.ts';
import { Partitioners, type Message, type KafkaMessage, type EachBatchPayload } from 'kafkajs';
import { eventCodec, EventDecodeError } from '../../schemas/codec.ts';
import { eventTopics, type EventName, type EventRecord } from '../../schemas/index.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { ensureTopicsWith, whileTopicsSettle } from '../../services/core/events/topics.ts';
import { eventsConsumed, eventsProduced, eventHandlerSeconds } from '../../services/core/metrics.ts';
import { EventDeduper } from './dedup.ts';
import { measureLag } from './lag.ts';
import { dueAt, failedMessage, failuresSoFar, originOf, retryDelay, type Origin } from './retry.ts';
import { traceStage, tracingStages } from '../../services/core/streaming/latencyTrace.ts';
import type { Pipeline, PipelineContext, PipelineEvent, PipelineOptions } from './types.ts';

const DEFAULT_DELAYS = [1_000, 10_000, 60_000, 300_000];

/**
 * Fetch settings of pipelines nobody waits on within a second (search index, trends, link
 * previews, delivery planning): a fetch waits for up to 64 KB or 250 ms, so a burst of posts
 * comes as one batch (one fetch, one offset commit, one read per kind) instead of a few events each.
 */
export const BACKGROUND_FETCH = { maxWaitTimeInMs: 250, minBytes: 64 * 1024 } as const;

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
  const maxAttempts = opts.maxAttempts ?? 5;
  const delays = opts.retryDelaysMs ?? DEFAULT_DELAYS;
  const logger = core.logger.child({ pipeline: name });
  const codec = eventCodec();
  const dedup = new EventDeduper(core.redis, groupId);
  const paused = new Partitions();

  const kafka = createKafka(config, logger, `fedisrv-${name}`);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopicsWith(admin, [...sourceTopics, retryTopic, deadLetterTopic], config.kafkaPartitions);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const consumer = kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: opts.sessionTimeout ?? 30_000,
    heartbeatInterval: opts.heartbeatInterval ?? 3_000,
    maxWaitTimeInMs: opts.maxWaitTimeInMs ?? 1_000,
    minBytes: opts.minBytes ?? 1,
  });
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed'),
  );

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

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, pause, isStale } = payload;
    const isRetry = batch.topic === retryTopic;
    const ctx: PipelineContext = { core, logger, dedup, heartbeat };
    const items: Item<N>[] = [];
    const retries: Message[] = [];
    const deadLetters: Message[] = [];
    let last: string | null = null;
    const count = (topic: string, type: string, outcome: string) =>
      eventsConsumed.inc({ pipeline: name, topic, type, outcome });

    for (const message of batch.messages) {
      if (isStale()) break;
      if (isRetry) {
        const due = dueAt(message);
        if (due > Date.now()) {
          // Not due yet: stop here, pause this partition (heartbeats go on) and resume when due.
          paused.pauseUntil(batch.topic, batch.partition, due, pause);
          break;
        }
      }
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
        if (reason === 'unknown-schema' && failures + 1 < maxAttempts) {
          retries.push(
            failedMessage(message, origin, failures + 1, err, Date.now() + retryDelay(delays, failures + 1)),
          );
          count(origin.topic, 'unknown', 'retried');
        } else {
          logger.warn({ err, origin }, 'undecodable message sent to the dead-letter topic');
          deadLetters.push(failedMessage(message, origin, failures + 1, err, null));
          count(origin.topic, 'unknown', 'dead_lettered');
        }
      }
      last = message.offset;
    }

    const failed = await handle(items, ctx);
    const failedSet = new Set(failed.map((f) => f.item));
    for (const item of items) if (!failedSet.has(item)) count(item.origin.topic, item.event.type, 'ok');
    for (const { item, error } of failed) {
      const failures = item.failures + 1;
      if (failures >= maxAttempts) {
        logger.error(
          { err: error, eventId: item.event.eventId, type: item.event.type, failures },
          'event dead-lettered',
        );
        deadLetters.push(failedMessage(item.message, item.origin, failures, error, null));
        count(item.origin.topic, item.event.type, 'dead_lettered');
      } else {
        logger.warn(
          { err: error, eventId: item.event.eventId, type: item.event.type, failures },
          'event will be retried',
        );
        retries.push(
          failedMessage(item.message, item.origin, failures, error, Date.now() + retryDelay(delays, failures)),
        );
        count(item.origin.topic, item.event.type, 'retried');
      }
    }
    const topicMessages = [
      { topic: retryTopic, messages: retries },
      { topic: deadLetterTopic, messages: deadLetters },
    ].filter((t) => t.messages.length > 0);
    if (topicMessages.length > 0) {
      await producer.sendBatch({ acks: -1, topicMessages });
      for (const t of topicMessages) eventsProduced.inc({ topic: t.topic, type: 'failed' }, t.messages.length);
    }
    // Only now is everything up to `last` handled or handed on: the offset may be committed.
    if (last !== null) resolveOffset(last);
    await heartbeat();
  }

  let joined = false;
  const joinedPromise = new Promise<void>((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      joined = true;
      off();
      resolve();
    });
  });
  await consumer.connect();
  await whileTopicsSettle(() =>
    consumer.subscribe({ topics: [...sourceTopics, retryTopic], fromBeginning: opts.fromBeginning ?? true }),
  );
  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
    eachBatch,
  });
  // kafkajs resolves run() before the group is joined; starting "for real" means joined.
  let joinTimer: NodeJS.Timeout | undefined;
  await Promise.race([joinedPromise, new Promise((r) => (joinTimer = setTimeout(r, 60_000)))]);
  clearTimeout(joinTimer);
  if (!joined) logger.warn('consumer has not joined its group after 60 s; still trying');

  const lagTopics = [...sourceTopics, retryTopic];
  const lag = () => measureLag(admin, name, groupId, lagTopics);
  const lagInterval = opts.lagIntervalMs ?? 15_000;
  const lagTimer =
    lagInterval > 0
      ? setInterval(
          () => lag().catch((err: unknown) => logger.debug({ err }, 'consumer lag not measured')),
          lagInterval,
        )
      : undefined;
  lagTimer?.unref();

  let stopped: Promise<void> | undefined;
  return {
    name,
    groupId,
    retryTopic,
    deadLetterTopic,
    lag,
    stop() {
      stopped ??= (async () => {
        clearInterval(lagTimer);
        paused.clear();
        // Waits for the batch in flight, commits what it resolved and leaves the group.
        await consumer.disconnect();
        await producer.disconnect();
        await admin.disconnect();
        logger.info('pipeline stopped');
      })();
      return stopped;
    },
  };
}
