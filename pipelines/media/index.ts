// The media pipeline: processes uploads queued by POST /api/v2/media (video, GIF, audio) —
// transcoding with ffmpeg, thumbnails, blurhash — and records the result with a MediaProcessed
// event. Redelivered events are harmless: a finished attachment is left as it is.
import type { Core } from '../../services/core/context.ts';
import { processQueuedMedia } from '../../services/core/media/attachments.ts';
import { runPipeline, type Pipeline, type PipelineOptions } from '../runtime/index.ts';

export const TYPES = ['MediaProcessRequested'] as const;

export type MediaPipelineOptions = Partial<
  Omit<PipelineOptions<'MediaProcessRequested'>, 'core' | 'name' | 'types' | 'handleEvent' | 'handleBatch'>
>;

export function runMediaPipeline(core: Core, opts: MediaPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'media',
    types: TYPES,
    ...opts,
    async handleEvent(event, ctx) {
      // Transcoding can outlast the session timeout: keep the group membership alive meanwhile.
      const beat = setInterval(() => void ctx.heartbeat().catch(() => undefined), 3_000);
      try {
        const doc = await processQueuedMedia(core, BigInt(event.payload.mediaId));
        ctx.logger.debug({ mediaId: event.payload.mediaId, state: doc?.processing ?? 'gone' }, 'media processed');
      } finally {
        clearInterval(beat);
      }
    },
  });
}
