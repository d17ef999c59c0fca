// A batch handler that reports which events failed (the ingress pipeline does): only those go
// through the retry topic; the batch is not handled again event by event, so its other events
// are applied once.
import { Partitioners } from 'kafkajs';
import type { Core } from '../../../services/core/context.ts';
import { runPipeline, type Pipeline } from '../../../pipelines/runtime/index.ts';
import { createKafka, topicName } from '../../../services/core/events/kafka.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { eventMessage } from '../../../services/core/events/kafkaSink.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { probe } from './helpers.ts';

let core: Core;
let pipeline: Pipeline;
const handled: string[] = [];

beforeAll(async () => {
  ({ core } = await createTestCore());
  pipeline = await runPipeline({
    core,
    name: 'batch-failures',
    types: ['ProbeSent'],
    maxAttempts: 3,
    retryDelaysMs: [300],
    ...consumerTuning,
    async handleBatch(events) {
      const failed = [];
      for (const event of events) {
        handled.push(`${event.payload.counter}#${event.attempt}`);
        if (event.payload.note === 'fails once' && event.attempt === 1)
          failed.push({ event, error: new Error('fails on purpose') });
      }
      return { failed };
    },
  });
});

afterAll(async () => {
  await pipeline?.stop();
  if (core) await closeTestCore(core);
});

it('retries only the events a batch handler reports as failed', async () => {
  const key = 'one-partition';
  const event = (counter: string, note: string | null = null) => ({
    eventId: counter,
    type: 'ProbeSent' as const,
    key,
    occurredAt: new Date(),
    payload: probe(counter, note),
  });
  const producer = createKafka(core.config, createLogger('warn', 'test'), 'test-batch').producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    await producer.send({
      topic: topicName(core.config, 'probe'),
      acks: -1,
      messages: [event('a'), event('b', 'fails once'), event('c')].map((e) => eventMessage(e).message),
    });
  } finally {
    await producer.disconnect();
  }
  await eventually(async () => handled.includes('b#2'));
  expect(handled.filter((h) => h.startsWith('a#'))).toEqual(['a#1']);
  expect(handled.filter((h) => h.startsWith('c#'))).toEqual(['c#1']);
  expect(handled.filter((h) => h.startsWith('b#'))).toEqual(['b#1', 'b#2']);
});
