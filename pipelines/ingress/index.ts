// The ingress pipeline: every InboundActivityReceived (an activity an inbox accepted with a valid
// signature) is processed here, in order per remote actor (the topic's key), by
// services/core/activitypub/ingress/process.ts. Handlers are idempotent, so redelivery is safe;
// an unexpected error goes through the runtime's retry topic and, in the end, the dead-letter topic.
import type { Core } from '../../services/core/context.ts';
import { processInbound } from '../../services/core/activitypub/ingress/process.ts';
import { runPipeline, type Pipeline, type PipelineOptions } from '../runtime/index.ts';

export const TYPES = ['InboundActivityReceived'] as const;
type IngressEvent = (typeof TYPES)[number];

export type IngressPipelineOptions = Partial<
  Omit<PipelineOptions<IngressEvent>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

export function runIngressPipeline(core: Core, opts: IngressPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'ingress',
    types: TYPES,
    partitionsConsumedConcurrently: 4,
    ...opts,
    async handleEvent(event) {
      await processInbound(core, event.payload);
    },
  });
}
