// An event written through the outbox travels through the real broker to a pipeline, whose effect
// lands in Redis and MongoDB; duplicates are absorbed by eventId dedup; stop() is clean.
import type { Core } from '../../../services/core/context.ts';
import { runPipeline, type Pipeline } from '../../../pipelines/runtime/index.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { consumerTuning, readTopic } from '../../support/kafka.ts';
import { runProbePipeline, counterValue, probe } from './helpers.ts';
import { eventCodec } from '../../../schemas/codec.ts';
import { registry } from '../../../services/core/metrics.ts';

let core: Core;
let pipeline: Pipeline;

beforeAll(async () => {
  ({ core } = await createTestCore());
  pipeline = await runProbePipeline(core, 'probe-counter');
});

afterAll(async () => {
  await pipeline?.stop();
  if (core) await closeTestCore(core);
});

async function writeProbe(p: ReturnType<typeof probe>): Promise<string> {
  const [eventId] = await core.outbox.write(
    [
      {
        type: 'ProbeSent',
        key: p.probeId,
        payload: p,
        verify: { collection: 'probe_writes', filter: { _id: p.probeId }, expect: 'exists' },
      },
    ],
    async (ids) => {
      await core.db
        .collection<{ _id: string; eventId: string }>('probe_writes')
        .insertOne({ _id: p.probeId, eventId: ids[0] });
      return ids;
    },
  );
  return eventId;
}

it('delivers an outbox write to a pipeline whose effect lands in Redis and MongoDB', async () => {
  const p = probe('first', 'hello');
  const eventId = await writeProbe(p);
  expect(await eventually(() => counterValue(core, 'first').then((n) => n > 0 && n))).toBe(1);
  const doc = await eventually(() =>
    core.db
      .collection<{ _id: string }>('probe_effects')
      .findOne({ _id: eventId })
      .then((d) => d ?? undefined),
  );
  expect(doc).toEqual({ _id: eventId, probeId: p.probeId, counter: 'first', note: 'hello' });
  // Published at once: nothing is left for the relay.
  expect(await core.db.collection('outbox').countDocuments()).toBe(0);

  // The message on the topic: key, headers and a single-object encoded value.
  const messages = await readTopic(core.config, 'probe', (m) => m.some((x) => x.headers['event-id'] === eventId));
  const found = messages.find((x) => x.headers['event-id'] === eventId)!;
  expect(found.key).toBe(p.probeId);
  expect(found.headers['event-type']).toBe('ProbeSent');
  const decoded = eventCodec().decode(found.value!);
  expect(decoded.type).toBe('ProbeSent');
  expect(decoded.record).toMatchObject({ eventId, probeId: p.probeId, counter: 'first', note: 'hello' });
});

it('applies an event published twice only once (dedup by eventId)', async () => {
  const p = probe('dup');
  const event = {
    eventId: `dup-${p.probeId}`,
    type: 'ProbeSent' as const,
    key: 'k1',
    occurredAt: new Date(),
    payload: p,
  };
  const sink = (core.outbox as unknown as { sink: { publish(e: unknown[]): Promise<void> } }).sink;
  await sink.publish([event]);
  await sink.publish([event]);
  // A later event on the same key (so the same partition, after both copies) marks the end.
  const barrier = { ...event, eventId: `barrier-${p.probeId}`, payload: probe('dup-barrier') };
  await sink.publish([barrier]);
  await eventually(() => counterValue(core, 'dup-barrier').then((n) => n > 0));
  expect(await counterValue(core, 'dup')).toBe(1);
  expect(await core.db.collection('probe_effects').countDocuments({ _id: event.eventId } as never)).toBe(1);
  const metrics = await registry.getSingleMetricAsString('events_consumed_total');
  expect(metrics).toMatch(/pipeline="probe-counter",topic="[^"]+\.probe",type="ProbeSent",outcome="ok"\} [3-9]/);
  // Events the pipeline handled are not also counted as skipped (only other types on its topics are).
  expect(metrics).not.toMatch(/pipeline="probe-counter",[^}]*outcome="skipped"\} [1-9]/);
});

it('commits offsets so the group has no lag once events are handled', async () => {
  await eventually(async () => (await pipeline.lag()) === 0, 20_000, 'zero lag');
  const gauge = await registry.getSingleMetricAsString('kafka_consumer_lag');
  expect(gauge).toMatch(/kafka_consumer_lag\{pipeline="probe-counter",topic="[^"]+\.probe",partition="0"\} 0/);
});

it('stop() finishes the batch in flight and commits it, so a restarted group does not redo it', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen: string[] = [];
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const slow = await runPipeline({
    core,
    name: 'graceful',
    types: ['ProbeSent'],
    ...consumerTuning,
    handleEvent: async (event) => {
      seen.push(event.eventId);
      if (event.payload.counter !== 'graceful') return;
      entered();
      await gate;
    },
  });
  const p = probe('graceful');
  const eventId = await writeProbe(p);
  await inHandler;
  const stopping = slow.stop();
  let stopped = false;
  void stopping.then(() => (stopped = true));
  // A negative can only be shown by waiting a little: stop() is still waiting for the handler.
  await new Promise((r) => setTimeout(r, 300));
  expect(stopped).toBe(false);
  release();
  await stopping;
  expect(seen).toContain(eventId);

  // The same group again: everything up to the stop was committed, so nothing is handled twice.
  const again: string[] = [];
  const restarted = await runPipeline({
    core,
    name: 'graceful',
    types: ['ProbeSent'],
    ...consumerTuning,
    handleEvent: async (event) => void again.push(event.eventId),
  });
  try {
    const marker = await writeProbe(probe('graceful-marker'));
    await eventually(async () => again.includes(marker), 20_000, 'marker after restart');
    expect(again.filter((id) => seen.includes(id))).toEqual([]);
  } finally {
    await restarted.stop();
  }
});
