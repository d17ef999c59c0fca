// The one place a consumer group talks to Kafka. `startConsumer` creates the client, its admin,
// producer and consumer, creates the topics it reads and writes, subscribes, waits for the group
// join, measures lag and stops cleanly. What a group does with its messages is a strategy on top:
// runPipeline (a retry topic with backoff, then `<name>.dlq`) or the delivery worker (delay tiers
// with a FIFO per host, then `delivery-worker.dlq`).
// - Held topics (retry and delay topics) carry the time each message is due. A partition is paused
//   (not slept on) until its head is due, with heartbeats going on, so neither other partitions
//   nor the group membership wait on it; the batch handler gets only the messages that are due.
// - At-least-once: the handler's output is published (acks=all) before the offset of the last
//   message it was given is resolved, so a crash re-delivers, never skips.
import { Partitioners, type CompressionTypes, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import type { Logger } from '../../services/core/logger.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { ensureTopicsWith, whileTopicsSettle } from '../../services/core/events/topics.ts';
import { eventsProduced } from '../../services/core/metrics.ts';
import type { Admin } from 'kafkajs';
import { gaugeLag, measureLag } from './lag.ts';
import { Partitions } from './partitions.ts';

/** Messages for one topic. */
export interface Outgoing {
  topic: string;
  messages: Message[];
  /** The `type` label of `events_produced_total`. */
  eventType: string;
}

/** The due messages of one fetched batch of one partition. */
export interface DueBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
  heartbeat(): Promise<void>;
}

export interface ConsumerOptions {
  core: Core;
  /** Consumer group `<prefix>.<name>`, client id `fedisrv-<name>`, dead-letter topic `<name>.dlq`. */
  name: string;
  logger: Logger;
  /** Full topic names to read. */
  topics: readonly string[];
  /** Read topics whose messages wait until due: full name → when a message may be handled (ms). */
  held?: ReadonlyMap<string, (message: KafkaMessage) => number>;
  /** Further full topic names it writes to (created at start; `partitions` unless given). */
  outputs?: ReadonlyArray<{ topic: string; partitions?: number }>;
  partitions: number;
  fromBeginning?: boolean;
  sessionTimeout?: number;
  heartbeatInterval?: number;
  /** Default: KAFKA_FETCH_WAIT_MS (config.kafkaFetchWaitMs). */
  maxWaitTimeInMs?: number;
  /** The broker answers a fetch once it has this many bytes or maxWaitTimeInMs passed (default 1: at once). */
  minBytes?: number;
  maxBytesPerPartition?: number;
  partitionsConsumedConcurrently?: number;
  /** How often the consumer lag gauge is refreshed (default 15 s; 0 turns it off). */
  lagIntervalMs?: number;
  /** Groups whose committed offsets a new group starts from (the earliest of them per partition). */
  seedFrom?: readonly string[];
  /** Handles the due messages; what it returns is published before their offsets are committed. */
  eachBatch(batch: DueBatch): Promise<Outgoing[]>;
}

export interface Consumer {
  readonly groupId: string;
  readonly deadLetterTopic: string;
  /** Publishes (acks=all) and counts. */
  send(out: readonly Outgoing[], compression?: CompressionTypes): Promise<void>;
  lag(): Promise<number>;
  /** The group's lag over some of its topics, as the gauge of `label`. */
  lagOf(label: string, topics: readonly string[]): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Creates (or grows) topics. Processes starting together may race to grow the same topic; the
 * loser's "invalid number of partitions" only means the winner already did it. A consumer that
 * subscribes before the broker's metadata shows new partitions is assigned only the old ones
 * until its metadata expires, so this waits until they are visible; on several brokers one may
 * not know a topic another has just created: it asks again then.
 */
export async function ensureTopics(admin: Admin, topics: readonly string[], partitions: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureTopicsWith(admin, [...topics], partitions);
      for (let i = 0; i < 50; i++) {
        const meta = await whileTopicsSettle(() => admin.fetchTopicMetadata({ topics: [...topics] }));
        if (meta.topics.every((t) => t.partitions.length >= partitions)) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      return;
    } catch (err) {
      if ((err as { type?: string }).type !== 'INVALID_PARTITIONS' || attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 300 * attempt));
    }
  }
}

/**
 * A group with no committed offset yet starts where `from` groups left off: per partition the
 * earliest offset any of them committed. Two processes may race here; the loser finds the group
 * seeded or already running, and either is fine.
 */
async function seedOffsets(admin: Admin, groupId: string, from: readonly string[], topics: readonly string[]) {
  const own = await admin.fetchOffsets({ groupId, topics: [...topics] });
  if (own.some((t) => t.partitions.some((p) => Number(p.offset) >= 0))) return;
  for (const topic of topics) {
    const earliest = new Map<number, bigint>();
    for (const groupId of from) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      for (const { partition, offset } of committed?.partitions ?? []) {
        if (Number(offset) < 0) continue;
        const seen = earliest.get(partition);
        if (seen === undefined || BigInt(offset) < seen) earliest.set(partition, BigInt(offset));
      }
    }
    if (earliest.size === 0) continue;
    const partitions = [...earliest].map(([partition, offset]) => ({ partition, offset: String(offset) }));
    await admin.setOffsets({ groupId, topic, partitions });
  }
}

async function publish(producer: Producer, out: readonly Outgoing[], compression?: CompressionTypes): Promise<void> {
  const topicMessages = out.filter((o) => o.messages.length > 0);
  if (topicMessages.length === 0) return;
  await producer.sendBatch({
    acks: -1,
    compression,
    topicMessages: topicMessages.map(({ topic, messages }) => ({ topic, messages })),
  });
  for (const o of topicMessages) eventsProduced.inc({ topic: o.topic, type: o.eventType }, o.messages.length);
}

export async function startConsumer(opts: ConsumerOptions): Promise<Consumer> {
  const { core, name, logger } = opts;
  const { config } = core;
  const groupId = `${config.kafkaTopicPrefix}.${name}`;
  const deadLetterTopic = topicName(config, `${name}.dlq`);
  const held = opts.held ?? new Map<string, (message: KafkaMessage) => number>();
  const paused = new Partitions();

  const kafka = createKafka(config, logger, `fedisrv-${name}`);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [...new Set([...opts.topics, deadLetterTopic])], opts.partitions);
  for (const o of opts.outputs ?? []) await ensureTopics(admin, [o.topic], o.partitions ?? opts.partitions);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  if (opts.seedFrom?.length)
    await seedOffsets(admin, groupId, opts.seedFrom, opts.topics).catch((err: unknown) =>
      logger.warn({ err }, 'consumer group not seeded from the groups it replaces'),
    );
  const consumer = kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: opts.sessionTimeout ?? 30_000,
    heartbeatInterval: opts.heartbeatInterval ?? 3_000,
    maxWaitTimeInMs: opts.maxWaitTimeInMs ?? config.kafkaFetchWaitMs,
    minBytes: opts.minBytes ?? 1,
    ...(opts.maxBytesPerPartition ? { maxBytesPerPartition: opts.maxBytesPerPartition } : {}),
  });
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed'),
  );

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
    consumer.subscribe({ topics: [...opts.topics], fromBeginning: opts.fromBeginning ?? true }),
  );
  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
    async eachBatch({ batch, resolveOffset, heartbeat, pause, isStale }) {
      const dueOf = held.get(batch.topic);
      const messages: KafkaMessage[] = [];
      for (const message of batch.messages) {
        if (isStale()) break;
        if (dueOf) {
          const due = dueOf(message);
          if (due > Date.now()) {
            // Not due yet: stop here, pause this partition (heartbeats go on) and resume when due.
            paused.pauseUntil(batch.topic, batch.partition, due, pause);
            break;
          }
        }
        messages.push(message);
      }
      if (messages.length > 0) {
        const out = await opts.eachBatch({ topic: batch.topic, partition: batch.partition, messages, heartbeat });
        await publish(producer, out);
        // Only now is everything up to the last message handled or handed on: it may be committed.
        resolveOffset(messages[messages.length - 1].offset);
      }
      await heartbeat();
    },
  });
  // kafkajs resolves run() before the group is joined; starting "for real" means joined.
  let joinTimer: NodeJS.Timeout | undefined;
  await Promise.race([joinedPromise, new Promise((r) => (joinTimer = setTimeout(r, 60_000)))]);
  clearTimeout(joinTimer);
  if (!joined) logger.warn('consumer has not joined its group after 60 s; still trying');

  const lagOf = (label: string, topics: readonly string[]) => measureLag(admin, label, groupId, [...topics]);
  const lag = () => lagOf(name, opts.topics);
  const lagInterval = opts.lagIntervalMs ?? 15_000;
  const stopGauge =
    lagInterval > 0
      ? gaugeLag(
          {
            admin,
            cluster: config.kafkaBrokers.join(','),
            pipeline: name,
            groupId,
            topics: opts.topics,
            onError: (err: unknown) => logger.debug({ err }, 'consumer lag not measured'),
          },
          lagInterval,
        )
      : undefined;

  let stopped: Promise<void> | undefined;
  return {
    groupId,
    deadLetterTopic,
    send: (out, compression) => publish(producer, out, compression),
    lag,
    lagOf,
    stop() {
      stopped ??= (async () => {
        stopGauge?.();
        paused.clear();
        // Waits for the batch in flight, commits what it resolved and leaves the group.
        await consumer.disconnect();
        await producer.disconnect();
        await admin.disconnect();
      })();
      return stopped;
    },
  };
}
