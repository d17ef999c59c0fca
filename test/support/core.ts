// A Core for tests on the real servers: its own database, Redis namespace and Kafka topics (see
// config.ts), the real Kafka event sink, and a record of what it published so tests can assert on
// events without consuming them. `closeTestCore` drops the database, deletes the topics, disconnects.
import type { Config } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { createLogger } from '../../services/core/logger.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { createKafka } from '../../services/core/events/kafka.ts';
import type { OutboxEvent } from '../../services/core/events/outbox.ts';
import { testConfig } from './config.ts';

export interface TestCore {
  core: Core;
  /** Every event this core published to Kafka, in order. */
  published: OutboxEvent[];
}

export async function createTestCore(
  config: Config = testConfig(),
  opts: { outboxGraceMs?: number } = {},
): Promise<TestCore> {
  const logger = createLogger(config.logLevel, 'test');
  const kafka = await createKafkaEventSink(config, logger);
  const published: OutboxEvent[] = [];
  const sink = {
    async publish(events: OutboxEvent[]) {
      await kafka.publish(events);
      published.push(...events);
    },
    close: () => kafka.close(),
  };
  const core = await createCore(config, { sink, logger, outboxGraceMs: opts.outboxGraceMs ?? 200 });
  return { core, published };
}

/** Deletes every Kafka topic of the test's prefix (each test core creates a dozen). */
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

export async function closeTestCore(core: Core): Promise<void> {
  await core.db.dropDatabase();
  await core.close();
  await deleteTestTopics(core.config);
}

/** Polls `check` until it returns something other than undefined/false; fails after `ms`. */
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
