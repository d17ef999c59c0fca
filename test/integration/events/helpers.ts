// Shared by the event integration tests: a core wired to the real Kafka sink, a probe pipeline
// whose effects (a Redis counter and a MongoDB document per event) show what was consumed, and a
// raw reader of a topic.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../../services/core/config.ts';
import { createCore, type Core } from '../../../services/core/context.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { createKafkaEventSink } from '../../../services/core/events/kafkaSink.ts';
import { createKafka, topicName } from '../../../services/core/events/kafka.ts';
import { runPipeline, type Pipeline, type PipelineEvent } from '../../../pipelines/runtime/index.ts';

export async function eventCore(config: Config, outboxGraceMs = 200): Promise<Core> {
  const logger = createLogger(config.logLevel, 'test');
  const sink = await createKafkaEventSink(config, logger);
  return createCore(config, { sink, logger, outboxGraceMs });
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  ms = 30_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const consumerTuning = { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, lagIntervalMs: 0 };

export function counterKey(core: Core, counter: string): string {
  return `${core.config.kafkaTopicPrefix}:probe:${counter}`;
}

/** Effect of one ProbeSent: counter +1 in Redis (once per eventId) and a document in MongoDB. */
export async function probeEffect(
  core: Core,
  event: PipelineEvent<'ProbeSent'>,
  dedup: { once(id: string, fn: () => Promise<void>): Promise<boolean> },
): Promise<void> {
  await dedup.once(event.eventId, async () => {
    await core.redis.incr(counterKey(core, event.payload.counter));
  });
  await core.db
    .collection<{ _id: string }>('probe_effects')
    .updateOne(
      { _id: event.eventId },
      { $setOnInsert: { probeId: event.payload.probeId, counter: event.payload.counter, note: event.payload.note } },
      { upsert: true },
    );
}

export function runProbePipeline(
  core: Core,
  name: string,
  extra: { failOn?: (e: PipelineEvent<'ProbeSent'>) => boolean; maxAttempts?: number } = {},
): Promise<Pipeline> {
  return runPipeline({
    core,
    name,
    types: ['ProbeSent'],
    maxAttempts: extra.maxAttempts ?? 3,
    retryDelaysMs: [300, 600],
    ...consumerTuning,
    handleEvent: async (event, ctx) => {
      if (extra.failOn?.(event)) throw new Error(`probe ${event.payload.probeId} fails on purpose`);
      await probeEffect(core, event, ctx.dedup);
    },
  });
}

export async function counterValue(core: Core, counter: string): Promise<number> {
  return Number((await core.redis.get(counterKey(core, counter))) ?? 0);
}

export function probe(counter: string, note: string | null = null) {
  const probeId = randomUUID();
  return { probeId, counter, note };
}

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

/** Deletes every topic of the test's prefix (tests create a dozen each; the broker keeps them). */
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
