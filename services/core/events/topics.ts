// Topic creation at start-up: every event topic (from the schemas' "topic" attributes) with the
// configured partition count. Idempotent and safe to run from many processes at once; a topic that
// exists with fewer partitions than configured is grown (partitions are never removed).
import type { Admin, Kafka } from 'kafkajs';
import type { Config } from '../config.ts';
import { eventTopics } from '../../../schemas/index.ts';
import { topicName } from './kafka.ts';

/** Every coarse event topic, without the prefix. */
export function eventTopicNames(): string[] {
  return [...new Set(Object.values(eventTopics))].sort();
}

function isAlreadyExists(err: unknown): boolean {
  const e = err as { type?: string; errors?: Array<{ type?: string }> };
  if (e.type === 'TOPIC_ALREADY_EXISTS') return true;
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => x.type === 'TOPIC_ALREADY_EXISTS');
}

/**
 * Runs `call`, again (up to ten times, backing off, about nine seconds in all) while the broker
 * answers "unknown topic or partition": what it says for a while about topics just created, until
 * their metadata settles (longer on a broker that has just started with many topics).
 */
export async function whileTopicsSettle<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 10 || (err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

/** Creates the given full topic names (or grows them to `partitions`). */
export async function ensureTopicsWith(admin: Admin, topics: string[], partitions: number): Promise<void> {
  if (topics.length === 0) return;
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t));
  // Topics that exist although the list missed them: it can lag a creation (another process's,
  // or our own a moment ago), and those may need growing like the listed ones.
  let unlisted: string[] = [];
  if (missing.length > 0) {
    try {
      // kafkajs gives up when the broker answers its leader check with "unknown topic or
      // partition" for a topic it has just created: that is transient, so ask again.
      await whileTopicsSettle(() =>
        admin.createTopics({
          waitForLeaders: true,
          // kafkajs waits 5 s by default; a broker busy creating many suites' or roles' topics at
          // once (CI's first minute, a cluster starting every role) needs longer.
          timeout: 30_000,
          topics: missing.map((topic) => ({ topic, numPartitions: partitions })),
        }),
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      unlisted = missing;
    }
  }
  const present = [...topics.filter((t) => existing.has(t)), ...unlisted];
  if (present.length === 0) return;
  const meta = await whileTopicsSettle(() => admin.fetchTopicMetadata({ topics: present }));
  const grow = meta.topics
    .filter((t) => t.partitions.length < partitions)
    .map((t) => ({ topic: t.name, count: partitions }));
  if (grow.length > 0) await admin.createPartitions({ topicPartitions: grow });
}

/** Creates every event topic of this deployment (prefix from the config). */
export async function ensureEventTopics(kafka: Kafka, config: Config, extra: string[] = []): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopicsWith(
      admin,
      [...eventTopicNames(), ...extra].map((t) => topicName(config, t)),
      config.kafkaPartitions,
    );
  } finally {
    await admin.disconnect();
  }
}
