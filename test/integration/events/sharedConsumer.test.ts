// Pipelines reading through one shared consumer (the `all` role, ADR 0013), on the real broker:
// every member handles every event of its topics once, a member's failure is retried for that
// member alone, the group commits once for all, and a new shared group starts where the members'
// own groups left off (nothing replayed, nothing skipped).
import type { Core } from '../../../services/core/context.ts';
import { createKafka } from '../../../services/core/events/kafka.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { runPipeline, type Pipeline } from '../../../pipelines/runtime/index.ts';
import { sharedConsumer, type SharedConsumer } from '../../../pipelines/runtime/sharedConsumer.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { caughtUp, consumerTuning } from '../../support/kafka.ts';
import { probe } from './helpers.ts';

let core: Core;
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  ({ core } = await createTestCore());
});

afterAll(async () => {
  for (const r of running.reverse()) await r.stop();
  if (core) await closeTestCore(core);
});

type Seen = Map<string, number>;

/** A probe pipeline that counts each probe it handles (attempts included) and fails where told. */
function recorder(name: string, seen: Seen, shared?: SharedConsumer, failFirst = new Set<string>()): Promise<Pipeline> {
  return runPipeline({
    core,
    name,
    types: ['ProbeSent'],
    retryDelaysMs: [200],
    ...consumerTuning,
    shared,
    async handleEvent(event) {
      const id = event.payload.probeId;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (failFirst.delete(id)) throw new Error(`${name} fails ${id} once on purpose`);
    },
  });
}

async function publish(p = probe('shared')): Promise<string> {
  await core.outbox.publishDirect([{ type: 'ProbeSent', key: p.probeId, payload: p }]);
  return p.probeId;
}

async function committedGroups(): Promise<string[]> {
  const admin = createKafka(core.config, createLogger('fatal', 'test'), 'test-groups').admin();
  await admin.connect();
  try {
    const { groups } = await admin.listGroups();
    const mine = groups.map((g) => g.groupId).filter((g) => g.startsWith(`${core.config.kafkaTopicPrefix}.`));
    const withOffsets: string[] = [];
    for (const groupId of mine) {
      const offsets = await admin.fetchOffsets({ groupId });
      if (offsets.some((t) => t.partitions.some((p) => Number(p.offset) >= 0))) withOffsets.push(groupId);
    }
    return withOffsets.sort();
  } finally {
    await admin.disconnect();
  }
}

it('hands every event to each member once, retries a failure for its member alone, and starts where the members left off', async () => {
  const prefix = core.config.kafkaTopicPrefix;
  // Before the switch: `alpha` and `beta` in groups of their own, each having handled `before`.
  const ownAlpha: Seen = new Map();
  const ownBeta: Seen = new Map();
  const alone = [await recorder('alpha', ownAlpha), await recorder('beta', ownBeta)];
  const before = await publish();
  await eventually(async () => ownAlpha.has(before) && ownBeta.has(before));
  await eventually(async () => (await caughtUp(core.config, 'alpha')) && (await caughtUp(core.config, 'beta')));
  for (const p of alone) await p.stop();

  // Published while nothing runs: the shared group must pick it up.
  const between = await publish();

  const shared = sharedConsumer(core, 'shared-probe', consumerTuning);
  const alpha: Seen = new Map();
  const beta: Seen = new Map();
  const failing = new Set<string>();
  const pipelines = [await recorder('alpha', alpha, shared), await recorder('beta', beta, shared, failing)];
  running.push(shared);
  await shared.start();

  const after = await publish();
  const flakyProbe = probe('shared');
  failing.add(flakyProbe.probeId);
  const flaky = await publish(flakyProbe);

  const all = [between, after, flaky];
  await eventually(async () => all.every((id) => alpha.has(id) && beta.has(id)) && beta.get(flaky) === 2);
  await eventually(async () => (await Promise.all(pipelines.map((p) => p.lag()))).every((lag) => lag === 0));

  // Nothing from before the switch again, nothing missed, `alpha` untouched by `beta`'s retry.
  expect(alpha.has(before)).toBe(false);
  expect(beta.has(before)).toBe(false);
  for (const id of all) expect([id, alpha.get(id)]).toEqual([id, 1]);
  expect(beta.get(after)).toBe(1);
  expect(beta.get(between)).toBe(1);
  expect(beta.get(flaky)).toBe(2);

  // One group reads for both members; their own groups' offsets stayed where they were.
  expect(pipelines.map((p) => p.groupId)).toEqual([`${prefix}.shared-probe`, `${prefix}.shared-probe`]);
  expect(await committedGroups()).toEqual([`${prefix}.alpha`, `${prefix}.beta`, `${prefix}.shared-probe`].sort());
});

it('refuses a member that joins after the start', async () => {
  const shared = sharedConsumer(core, 'shared-late', consumerTuning);
  await recorder('early', new Map(), shared);
  running.push(shared);
  await shared.start();
  await expect(recorder('late', new Map(), shared)).rejects.toThrow('late joined after start');
});
