// A poison message never blocks its partition: an undecodable message goes straight to the
// dead-letter topic, an event whose handler keeps failing goes through the retry topic and then to
// the dead-letter topic, while later events on the same partition are handled meanwhile.
import { Partitioners } from 'kafkajs';
import type { Core } from '../../../services/core/context.ts';
import { runPipeline, type Pipeline } from '../../../pipelines/runtime/index.ts';
import { replayDeadLetters } from '../../../pipelines/runtime/deadLetters.ts';
import { createKafka, topicName } from '../../../services/core/events/kafka.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { eventMessage } from '../../../services/core/events/kafkaSink.ts';
import { eventCodec } from '../../../schemas/codec.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { consumerTuning, readTopic } from '../../support/kafka.ts';
import { runProbePipeline, counterValue, probe } from './helpers.ts';

let core: Core;
let pipeline: Pipeline;
const handled: string[] = [];
let poisonFixed = false;

beforeAll(async () => {
  ({ core } = await createTestCore());
  pipeline = await runProbePipeline(core, 'poison', {
    maxAttempts: 3,
    failOn: (e) => {
      handled.push(`${e.payload.counter}#${e.attempt}`);
      return e.payload.note === 'poison' && !poisonFixed;
    },
  });
});

afterAll(async () => {
  await pipeline?.stop();
  if (core) await closeTestCore(core);
});

it('dead-letters poison messages while later messages on the same partition are processed', async () => {
  const key = 'same-key';
  const good = { eventId: 'good', type: 'ProbeSent' as const, key, occurredAt: new Date(), payload: probe('good') };
  const bad = { ...good, eventId: 'bad', payload: probe('bad', 'poison') };
  const kafka = createKafka(core.config, createLogger('warn', 'test'), 'test-poison');
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    // One send: the three messages share a key, so one partition, in this order.
    await producer.send({
      topic: topicName(core.config, 'probe'),
      acks: -1,
      messages: [
        { key, value: Buffer.from('this is not Avro'), headers: { 'event-id': 'garbage' } },
        eventMessage(bad).message,
        eventMessage(good).message,
      ],
    });
  } finally {
    await producer.disconnect();
  }

  // The good event behind both poison messages is handled without waiting for their retries.
  await eventually(() => counterValue(core, 'good').then((n) => n === 1));
  expect(handled.indexOf('good#1')).toBeGreaterThan(-1);

  const dlq = await readTopic(core.config, 'poison.dlq', (m) => m.length >= 2);
  const garbage = dlq.find((m) => m.headers['event-id'] === 'garbage')!;
  expect(garbage.value?.toString()).toBe('this is not Avro');
  expect(garbage.headers['retry-attempt']).toBe('1');
  expect(garbage.headers.error).toMatch(/not an Avro single-object/);
  const poisoned = dlq.find((m) => m.headers['event-id'] === 'bad')!;
  expect(poisoned.key).toBe(key);
  expect(poisoned.headers['retry-attempt']).toBe('3');
  expect(poisoned.headers['original-topic']).toBe(topicName(core.config, 'probe'));
  expect(poisoned.headers.error).toMatch(/fails on purpose/);
  expect(eventCodec().decode(poisoned.value!).record).toMatchObject({ eventId: 'bad', counter: 'bad' });
  // Three attempts: the first from the event topic, two from the retry topic.
  expect(handled.filter((h) => h.startsWith('bad#'))).toEqual(['bad#1', 'bad#2', 'bad#3']);
  expect(handled.indexOf('good#1')).toBeLessThan(handled.indexOf('bad#2'));
  expect(await counterValue(core, 'bad')).toBe(0);
  // Everything is committed: nothing is stuck behind the poison messages.
  await eventually(async () => (await pipeline.lag()) === 0, 20_000, 'zero lag');
});

it('replays dead letters to the retry topic once the cause is fixed, each only once', async () => {
  // The first test left the garbage message and the poisoned event in the dead-letter topic.
  poisonFixed = true;
  expect(await replayDeadLetters(core, 'poison')).toBe(2);
  await eventually(() => counterValue(core, 'bad').then((n) => n === 1), 20_000, 'replayed event handled');
  // The garbage is still garbage: back in the dead-letter topic, and only it is replayed next time.
  await readTopic(core.config, 'poison.dlq', (m) => m.length >= 3);
  expect(await replayDeadLetters(core, 'poison')).toBe(1);
});

it('waits for a retry due later than the session timeout without blocking other events', async () => {
  const times = new Map<string, number>();
  const applied = new Map<string, number>();
  const flakyPipeline = await runPipeline({
    core,
    name: 'flaky',
    types: ['ProbeSent'],
    ...consumerTuning, // sessionTimeout 6 s
    retryDelaysMs: [7_000],
    handleEvent: async (event, ctx) => {
      times.set(`${event.payload.counter}#${event.attempt}`, Date.now());
      if (event.payload.note === 'flaky' && event.attempt === 1) throw new Error('first attempt fails');
      await ctx.dedup.once(event.eventId, async () => {
        applied.set(event.payload.counter, (applied.get(event.payload.counter) ?? 0) + 1);
      });
    },
  });
  // (The 'poison' pipeline reads the same topic, so this one counts its own effects.)
  const count = async (counter: string) => applied.get(counter) ?? 0;
  try {
    const sink = (core.outbox as unknown as { sink: { publish(e: unknown[]): Promise<void> } }).sink;
    const flaky = {
      eventId: 'flaky-1',
      type: 'ProbeSent',
      key: 'f',
      occurredAt: new Date(),
      payload: probe('flaky', 'flaky'),
    };
    await sink.publish([flaky]);
    await eventually(async () => times.has('flaky#1'), 20_000, 'first attempt');
    // While the retry waits (its partition paused), new events are handled at once.
    const later = { ...flaky, eventId: 'later-1', payload: probe('later') };
    await sink.publish([later]);
    await eventually(() => count('later').then((n) => n === 1), 5_000, 'later event');
    expect(times.has('flaky#2')).toBe(false);
    await eventually(() => count('flaky').then((n) => n === 1), 30_000, 'retried event');
    expect(times.get('flaky#2')! - times.get('flaky#1')!).toBeGreaterThanOrEqual(7_000);
    expect(await count('flaky')).toBe(1);
    await eventually(async () => (await flakyPipeline.lag()) === 0, 20_000, 'zero lag');
  } finally {
    await flakyPipeline.stop();
  }
}, 60_000);
