// No event is lost (nor applied twice) when a process dies with SIGKILL anywhere between its
// MongoDB write and the publish: a real child process does an outbox write and is killed at each
// point; then the outbox relay runs and the consumer's effects are counted.
import type { Core } from '../../../services/core/context.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { runOutboxRelay } from '../../../pipelines/outbox/index.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { readTopic } from '../../support/kafka.ts';
import { killChild, logged, serverEnv, startNode } from '../../support/processes.ts';
import { runProbePipeline, counterValue, probe } from './helpers.ts';

let core: Core;
let pipeline: Pipeline;

beforeAll(async () => {
  ({ core } = await createTestCore(testConfig(), { outboxGraceMs: 300 }));
  pipeline = await runProbePipeline(core, 'no-loss');
});

afterAll(async () => {
  await pipeline?.stop();
  if (core) await closeTestCore(core);
});

type KillPoint = 'after-record' | 'after-write' | 'after-publish';

/** Runs the writer child until it reports READY at `point`, then kills it with SIGKILL. */
async function writeAndKill(point: KillPoint, probeId: string, counter: string): Promise<void> {
  const writer = startNode(
    'test/integration/events/fixtures/outboxWriter.ts',
    [point, probeId, counter],
    serverEnv(core.config, { LOG_LEVEL: 'error' }),
  );
  try {
    await Promise.race([
      logged(writer, 'READY'),
      writer.exit.then(({ code }) =>
        Promise.reject(new Error(`writer exited with ${code} before ${point}: ${writer.output()}`)),
      ),
    ]);
  } finally {
    await killChild(writer);
  }
}

async function eventsOnTopic(probeIds: string[], expected: number) {
  const msgs = await readTopic(
    core.config,
    'probe',
    (m) => m.filter((x) => probeIds.includes(x.key ?? '')).length >= expected,
  );
  return msgs.filter((x) => probeIds.includes(x.key ?? ''));
}

it('publishes, exactly once in effect, events whose writer was killed after its write', async () => {
  const lost = probe('killed-after-write');
  const dup = probe('killed-after-publish');
  const never = probe('killed-after-record');
  await writeAndKill('after-write', lost.probeId, lost.counter);
  await writeAndKill('after-publish', dup.probeId, dup.counter);
  await writeAndKill('after-record', never.probeId, never.counter);

  // Each kill left its outbox record pending; the entity exists only where the write ran.
  const outbox = core.db.collection('outbox');
  expect(await outbox.countDocuments()).toBe(3);
  expect(
    await core.db
      .collection('probe_writes')
      .countDocuments({ _id: { $in: [lost.probeId, dup.probeId, never.probeId] } } as never),
  ).toBe(2);
  // Before the relay the first event was never published: nothing consumed it.
  expect(await counterValue(core, lost.counter)).toBe(0);

  const relay = runOutboxRelay(core, { intervalMs: 100 });
  try {
    await eventually(async () => (await outbox.countDocuments()) === 0, 20_000, 'outbox drained');
  } finally {
    await relay.stop();
  }

  // A later event on the same key as the duplicate marks the end of what the relay published.
  const barrier = probe('barrier');
  await core.outbox.write(
    [
      {
        type: 'ProbeSent',
        key: dup.probeId,
        payload: barrier,
        verify: { collection: 'probe_writes', filter: { _id: barrier.probeId }, expect: 'exists' },
      },
    ],
    async () => void (await core.db.collection<{ _id: string }>('probe_writes').insertOne({ _id: barrier.probeId })),
  );
  await eventually(() => counterValue(core, 'barrier').then((n) => n === 1), 20_000, 'barrier consumed');
  await eventually(() => counterValue(core, lost.counter).then((n) => n === 1), 20_000, 'relayed event consumed');

  // On the topic: the event killed after its write once (by the relay), the one killed after
  // publishing twice (child + relay, same eventId), the one killed before its write never.
  const msgs = await eventsOnTopic([lost.probeId, dup.probeId, never.probeId], 4);
  const byKey = (id: string) => msgs.filter((m) => m.key === id);
  expect(byKey(lost.probeId)).toHaveLength(1);
  const dupMsgs = byKey(dup.probeId).filter((m) => m.headers['event-id'] !== undefined);
  expect(dupMsgs.length).toBeGreaterThanOrEqual(3); // two copies of the event + the barrier
  const dupEventIds = dupMsgs.map((m) => m.headers['event-id']);
  const [dupEventId] = dupEventIds;
  expect(dupEventIds.filter((id) => id === dupEventId)).toHaveLength(2);
  expect(byKey(never.probeId)).toHaveLength(0);

  // Effects: exactly once each, none for the write that never happened.
  expect(await counterValue(core, lost.counter)).toBe(1);
  expect(await counterValue(core, dup.counter)).toBe(1);
  expect(await counterValue(core, never.counter)).toBe(0);
  const effects = core.db.collection('probe_effects');
  expect(await effects.countDocuments({ probeId: lost.probeId })).toBe(1);
  expect(await effects.countDocuments({ probeId: dup.probeId })).toBe(1);
  expect(await effects.countDocuments({ probeId: never.probeId })).toBe(0);
});
