// The replies pipeline: RepliesFetchRequested jobs (a remote status just stored whose Note names
// replies; a user opening a remote thread) read the status's `replies` collection and store the
// replies we lack (services/core/activitypub/replies/fetchReplies.ts). Keyed by the status's
// host, so one server's jobs run one after another; jobs of several servers run side by side.
import type { Core } from '../../services/core/context.ts';
import { runRepliesJob } from '../../services/core/activitypub/replies/fetchReplies.ts';
import { runPipeline, type Pipeline, type PipelineOptions } from '../runtime/index.ts';

export const TYPES = ['RepliesFetchRequested'] as const;
type RepliesEvent = (typeof TYPES)[number];

export type RepliesPipelineOptions = Partial<
  Omit<PipelineOptions<RepliesEvent>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

export function runRepliesPipeline(core: Core, opts: RepliesPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'replies',
    types: TYPES,
    partitionsConsumedConcurrently: 4,
    maxAttempts: 3,
    ...opts,
    async handleEvent(event, ctx) {
      const outcome = await runRepliesJob(core, event.payload);
      if (outcome.fetched > 0 || outcome.pages > 0)
        ctx.logger.info(
          { eventId: event.eventId, statusId: event.payload.statusId, mode: event.payload.mode, ...outcome },
          'replies fetched',
        );
    },
  });
}
