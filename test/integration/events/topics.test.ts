// Topic creation at start-up: every event topic with the configured partitions, idempotent
// (also when processes race), and grown when the configured count goes up.
import type { Admin } from 'kafkajs';
import { createKafka, topicName } from '../../../services/core/events/kafka.ts';
import {
  ensureEventTopics,
  ensureTopicsWith,
  eventTopicNames,
  whileTopicsSettle,
} from '../../../services/core/events/topics.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { eventTopics } from '../../../schemas/index.ts';
import { testConfig } from '../../support/config.ts';
import { deleteTestTopics } from '../../support/kafka.ts';
import { eventually } from '../../support/core.ts';

const config = testConfig();
const kafka = createKafka(config, createLogger('warn', 'test'), 'test-topics');
let admin: Admin;

beforeAll(async () => {
  admin = kafka.admin();
  await admin.connect();
});

afterAll(async () => {
  await admin.disconnect();
  await deleteTestTopics(config);
});

/** The partition count the broker reports (its metadata may not know a just-created topic yet). */
async function partitions(topic: string): Promise<number> {
  const meta = await whileTopicsSettle(() => admin.fetchTopicMetadata({ topics: [topic] }));
  return meta.topics[0].partitions.length;
}

it('creates every event topic once, with the configured partitions, even when processes race', async () => {
  expect(eventTopicNames()).toEqual([...new Set(Object.values(eventTopics))].sort());
  await Promise.all([
    ensureEventTopics(kafka, config),
    ensureEventTopics(kafka, config),
    ensureEventTopics(kafka, config),
  ]);
  await ensureEventTopics(kafka, config);
  // The topic list follows creations within moments (a busy broker lags).
  await eventually(
    async () => {
      const listed = new Set(await admin.listTopics());
      return eventTopicNames().every((t) => listed.has(topicName(config, t)));
    },
    20_000,
    'every event topic listed',
  );
  for (const t of eventTopicNames()) expect(await partitions(topicName(config, t))).toBe(config.kafkaPartitions);
});

it('grows a topic to a higher configured partition count', async () => {
  const topic = topicName(config, 'growing');
  await ensureTopicsWith(admin, [topic], 1);
  await eventually(async () => (await partitions(topic).catch(() => 0)) === 1, 20_000, 'the new topic known');
  await ensureTopicsWith(admin, [topic], 3);
  // The broker's metadata follows a partition change within moments, as it does a creation.
  await eventually(async () => (await partitions(topic)) === 3, 20_000, 'the topic grown to 3');
  await ensureTopicsWith(admin, [topic], 2); // never shrinks
  expect(await partitions(topic)).toBe(3);
});
