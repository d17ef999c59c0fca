// The ingress pipeline: every InboundActivityReceived (an activity an inbox accepted with a valid
// signature) is applied here, in order per remote actor (the topic's key), a fetched batch at a
// time by services/core/activitypub/ingress/batch.ts (bulk reads and writes, actors' activities in
// rounds). Handlers are idempotent, so redelivery is safe; an activity that fails goes alone
// through the runtime's retry topic and, in the end, the dead-letter topic.
import type { Core } from '../../services/core/context.ts';
import { processInboundBatch } from '../../services/core/activitypub/ingress/batch.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';

export const TYPES = ['InboundActivityReceived'] as const;
type IngressEvent = (typeof TYPES)[number];

export type IngressPipelineOptions = PipelineOverrides<IngressEvent>;

export function runIngressPipeline(core: Core, opts: IngressPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'ingress',
    types: TYPES,
    partitionsConsumedConcurrently: 4,
    ...opts,
    async handleBatch(events) {
      const failures = await processInboundBatch(
        core,
        events.map((e) => e.payload),
      );
      return { failed: failures.map((f) => ({ event: events[f.index]!, error: f.error })) };
    },
  });
}
