// Kafka for tests: consumer settings that keep group joins and fetches short, a raw reader of a
// topic (to check what really went over the broker), and removal of a test's topics.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../services/core/config.ts';
import { createLogger } from '../../services/core/logger.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { eventually } from './eventually.ts';

/** Consumer settings for pipelines under test: fast rebalances, short fetch waits, no lag polling. */
export const consumerTuning = { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, lagIntervalMs: 0 };

export interface RawMessage {
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

/** Reads a topic from the beginning until `enough` says so (or fails after `ms`). */
export async function readTopic(
  config: Config,
  coarseTopic: string,
  enough: (msgs: RawMessage[]) => boolean,
  ms = 30_000,
): Promise<RawMessage[]> {
  const kafka = createKafka(config, createLogger('warn', 'test'), 'test-reader');
  const consumer = kafka.consumer({ groupId: `${config.kafkaTopicPrefix}.reader.${randomUUID()}`, ...consumerTuning });
  const msgs: RawMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topicName(config, coarseTopic)], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {}))
          if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
        msgs.push({
          key: message.key?.toString() ?? null,
          value: message.value,
          headers,
          partition,
          offset: message.offset,
        });
      },
    });
    await eventually(async () => enough(msgs), ms, `messages on ${coarseTopic}`);
    return msgs;
  } finally {
    await consumer.disconnect();
  }
}

/** Deletes every Kafka topic of the test's prefix (each test core creates its event topics). */
export async function deleteTestTopics(config: Config): Promise<void> {
  const admin = createKafka(config, createLogger('fatal', 'test'), 'test-cleanup').admin();
  await admin.connect();
  try {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(`${config.kafkaTopicPrefix}.`));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Whether pipeline `name`'s consumer group has committed every message of the topics it reads (the
 * ones it has committed offsets for): redelivered work, if any, is done.
 */
export async function caughtUp(config: Config, name: string): Promise<boolean> {
  const admin = createKafka(config, createLogger('fatal', 'test'), 'test-lag').admin();
  await admin.connect();
  try {
    const committed = await admin.fetchOffsets({ groupId: `${config.kafkaTopicPrefix}.${name}` });
    for (const { topic, partitions } of committed) {
      const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));
      for (const p of partitions)
        if (BigInt(ends.get(p.partition) ?? '0') > BigInt(p.offset === '-1' ? '0' : p.offset)) return false;
    }
    return committed.length > 0;
  } finally {
    await admin.disconnect();
  }
}
