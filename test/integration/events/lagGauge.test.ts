// The consumer lag gauge on the real broker: one round a process measures every gauged group,
// reading each topic's end offsets once for all of them.
import { Partitioners, type Admin } from 'kafkajs';
import { createKafka, topicName } from '../../../services/core/events/kafka.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { consumerLag } from '../../../services/core/metrics.ts';
import { gaugeLag, measureLag } from '../../../pipelines/runtime/lag.ts';
import { testConfig } from '../../support/config.ts';
import { deleteTestTopics } from '../../support/kafka.ts';
import { eventually } from '../../support/eventually.ts';

const config = testConfig();
const kafka = createKafka(config, createLogger('warn', 'test'), 'lag-gauge-test');
const topic = topicName(config, 'lag-gauge');
let admin: Admin;

beforeAll(async () => {
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({
    topic,
    messages: [0, 1, 2, 3, 4].map((i) => ({ partition: i % 2, value: `m${i}` })),
  });
  await producer.disconnect();
  // Group "behind" has read nothing; group "done" has committed every message.
  await admin.setOffsets({
    groupId: `${config.kafkaTopicPrefix}.done`,
    topic,
    partitions: [
      { partition: 0, offset: '3' },
      { partition: 1, offset: '2' },
    ],
  });
});

afterAll(async () => {
  await admin.disconnect();
  await deleteTestTopics(config);
});

async function gaugeOf(pipeline: string): Promise<number | undefined> {
  const values = (await consumerLag.get()).values.filter((v) => v.labels.pipeline === pipeline);
  return values.length === 2 ? values.reduce((sum, v) => sum + v.value, 0) : undefined;
}

/** The admin, counting its reads of end offsets. */
function countingAdmin(): { admin: Admin; reads: () => number } {
  let reads = 0;
  const counting = new Proxy(admin, {
    get(target, prop, receiver) {
      if (prop !== 'fetchTopicOffsets') return Reflect.get(target, prop, receiver) as unknown;
      return (t: string) => {
        reads++;
        return target.fetchTopicOffsets(t);
      };
    },
  });
  return { admin: counting, reads: () => reads };
}

const pipelineOf = (name: string) => `${config.kafkaTopicPrefix}-${name}`;
const groupIdOf = (name: string) => `${config.kafkaTopicPrefix}.${name}`;

it('measures each group against end offsets read once per round', async () => {
  const { admin: counting, reads } = countingAdmin();
  const ends = new Map();
  expect(await measureLag(counting, pipelineOf('behind'), groupIdOf('behind'), [topic], ends)).toBe(5);
  expect(await measureLag(counting, pipelineOf('done'), groupIdOf('done'), [topic], ends)).toBe(0);
  expect(reads()).toBe(1);
  // Outside a round (a caller waiting for its group to catch up), the ends are read afresh.
  expect(await measureLag(counting, pipelineOf('done'), groupIdOf('done'), [topic])).toBe(0);
  expect(reads()).toBe(2);
});

it('gauges the registered groups every interval until they are removed', async () => {
  const errors: unknown[] = [];
  const group = (name: string) => ({
    admin,
    cluster: config.kafkaBrokers.join(','),
    pipeline: pipelineOf(`gauged-${name}`),
    groupId: groupIdOf(name),
    topics: [topic],
    onError: (err: unknown) => errors.push(err),
  });
  const stops = [gaugeLag(group('behind'), 200), gaugeLag(group('done'), 200)];
  try {
    await eventually(async () => (await gaugeOf(pipelineOf('gauged-behind'))) === 5, 10_000, 'lag of 5');
    await eventually(async () => (await gaugeOf(pipelineOf('gauged-done'))) === 0, 10_000, 'lag of 0');
  } finally {
    for (const stop of stops) stop();
  }
  // Removed: no round sets the gauge again (a round in flight may end first).
  await new Promise((r) => setTimeout(r, 300));
  consumerLag.reset();
  await new Promise((r) => setTimeout(r, 500));
  expect(await gaugeOf(pipelineOf('gauged-behind'))).toBeUndefined();
  expect(errors).toEqual([]);
});
