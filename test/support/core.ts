// A Core for tests on the real servers: its own database, Redis namespace and Kafka topics (see
// config.ts), the real Kafka event sink, and a record of what it published so tests can assert on
// events without consuming them. `closeTestCore` removes all three and disconnects.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../services/core/config.ts';
import { createCore, type Core } from '../../services/core/context.ts';
import { createLogger } from '../../services/core/logger.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import type { OutboxEvent } from '../../services/core/events/outbox.ts';
import { connectMongo } from '../../services/core/db/mongo.ts';
import type { Cluster } from 'ioredis';
import { connectRedis, isCluster, type Redis } from '../../services/core/db/redis.ts';
import { delAcrossSlots } from '../../services/core/db/redisSlots.ts';
import { testConfig } from './config.ts';
import { deleteTestTopics } from './kafka.ts';

export { eventually } from './eventually.ts';

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

/**
 * A test core whose MongoDB client reports its commands (`core.mongo.on('commandStarted', ...)`),
 * for tests that count them: db/mongo.ts asks for the reports only when MONGO_COMMAND_COUNTS names
 * a file, set here for this core alone. `close` closes the core and removes the file.
 */
export async function createCommandReportingCore(
  config: Config = testConfig(),
): Promise<{ core: Core; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mongo-commands-'));
  process.env.MONGO_COMMAND_COUNTS = join(dir, 'counts.json');
  try {
    const { core } = await createTestCore(config);
    return {
      core,
      close: async () => {
        await closeTestCore(core);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } finally {
    delete process.env.MONGO_COMMAND_COUNTS; // for this core only, not the next one
  }
}

/** Deletes the keys of a Redis namespace (rate limits, idempotency records, dedup claims, ...). */
export async function deleteRedisNamespace(redis: Redis, namespace: string): Promise<void> {
  if (!namespace) return;
  await deleteRedisKeys(redis, namespace, '*');
}

/** Deletes the keys of a namespace that match a pattern (`ratelimit:*`), on every primary of a cluster. */
export async function deleteRedisKeys(redis: Redis, namespace: string, pattern: string): Promise<void> {
  // The connection prefixes the keys it is given, but neither SCAN patterns nor the keys SCAN returns.
  const prefix = `${namespace}:`;
  // A cluster's keys are spread over its primaries: each is scanned, and keys of many slots deleted.
  const nodes = isCluster(redis) ? (redis as unknown as Cluster).nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}${pattern}`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0)
        await delAcrossSlots(
          redis,
          keys.map((k) => k.slice(prefix.length)),
        );
    } while (cursor !== '0');
  }
}

/** Drops the database, empties the Redis namespace, disconnects and deletes the Kafka topics. */
export async function closeTestCore(core: Core): Promise<void> {
  await core.db.dropDatabase();
  await deleteRedisNamespace(core.redis, core.config.redisNamespace);
  await core.close();
  await deleteTestTopics(core.config);
}

/** The same clean-up for a test whose data only child processes wrote (no Core of its own). */
export async function removeTestData(config: Config): Promise<void> {
  const { client, db } = await connectMongo(config.mongoUrl);
  try {
    await db.dropDatabase();
  } finally {
    await client.close();
  }
  const redis = connectRedis(config, { namespace: config.redisNamespace });
  try {
    await deleteRedisNamespace(redis, config.redisNamespace);
  } finally {
    redis.disconnect();
  }
  await deleteTestTopics(config);
}

/**
 * How many connections subscribe to a (prefixed) channel. A cluster's PUBSUB NUMSUB counts only the
 * subscribers of the node asked, so every node is asked and the counts added.
 */
export async function channelSubscribers(redis: Redis, channel: string): Promise<number> {
  const nodes = isCluster(redis) ? (redis as unknown as Cluster).nodes('all') : [redis];
  const counts = await Promise.all(
    nodes.map(async (node) => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1] ?? 0)),
  );
  return counts.reduce((a, b) => a + b, 0);
}
