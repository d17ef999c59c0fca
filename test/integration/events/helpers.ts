// Shared by the event integration tests: a probe pipeline whose effects (a Redis counter and a
// MongoDB document per event) show what was consumed.
import { randomUUID } from 'node:crypto';
import type { Core } from '../../../services/core/context.ts';
import { runPipeline, type Pipeline, type PipelineEvent } from '../../../pipelines/runtime/index.ts';
import { consumerTuning } from '../../support/kafka.ts';

// Kept for test/e2e/clients, written meanwhile; import it from test/support/kafka.ts.

function counterKey(core: Core, counter: string): string {
  return `${core.config.kafkaTopicPrefix}:probe:${counter}`;
}

/** Effect of one ProbeSent: counter +1 in Redis (once per eventId) and a document in MongoDB. */
async function probeEffect(
  core: Core,
  event: PipelineEvent<'ProbeSent'>,
  dedup: { once(id: string, fn: () => Promise<void>): Promise<boolean> },
): Promise<void> {
  await dedup.once(event.eventId, async () => {
    await core.redis.incr(counterKey(core, event.payload.counter));
  });
  await core.db
    .collection<{ _id: string }>('probe_effects')
    .updateOne(
      { _id: event.eventId },
      { $setOnInsert: { probeId: event.payload.probeId, counter: event.payload.counter, note: event.payload.note } },
      { upsert: true },
    );
}

export function runProbePipeline(
  core: Core,
  name: string,
  extra: { failOn?: (e: PipelineEvent<'ProbeSent'>) => boolean; maxAttempts?: number } = {},
): Promise<Pipeline> {
  return runPipeline({
    core,
    name,
    types: ['ProbeSent'],
    maxAttempts: extra.maxAttempts ?? 3,
    retryDelaysMs: [300, 600],
    ...consumerTuning,
    handleEvent: async (event, ctx) => {
      if (extra.failOn?.(event)) throw new Error(`probe ${event.payload.probeId} fails on purpose`);
      await probeEffect(core, event, ctx.dedup);
    },
  });
}

export async function counterValue(core: Core, counter: string): Promise<number> {
  return Number((await core.redis.get(counterKey(core, counter))) ?? 0);
}

export function probe(counter: string, note: string | null = null) {
  const probeId = randomUUID();
  return { probeId, counter, note };
}
