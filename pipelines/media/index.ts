// The media pipeline: processes uploads queued by POST /api/v2/media (video, GIF, audio) —
// transcoding with ffmpeg, thumbnails, blurhash — and records the result with a MediaProcessed
// event; and copies remote attachments' files (services/core/media/remoteCache.ts) and remote
// avatars, headers (remoteProfileImages.ts) and custom emojis (emojis/remoteEmojis.ts) into our
// storage, processed like uploads.
// Redelivered events are harmless: a finished or cached file is left as it is.
import type { Core } from '../../services/core/context.ts';
import { processQueuedMedia } from '../../services/core/media/attachments.ts';
import { cacheRemoteAttachment, needsRedownload } from '../../services/core/media/remoteCache.ts';
import { cacheRemoteProfileImages } from '../../services/core/media/remoteProfileImages.ts';
import { cacheRemoteEmoji } from '../../services/core/emojis/remoteEmojis.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { mediaAttachments } from '../../services/core/model/media.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';

export const TYPES = ['MediaProcessRequested', 'ProfileImagesFetchRequested', 'EmojiFetchRequested'] as const;
type MediaEvent = (typeof TYPES)[number];

export type MediaPipelineOptions = PipelineOverrides<MediaEvent>;

export function runMediaPipeline(core: Core, opts: MediaPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'media',
    types: TYPES,
    ...opts,
    async handleEvent(event, ctx) {
      if (event.type === 'ProfileImagesFetchRequested') {
        await cacheRemoteProfileImages(core, BigInt(event.payload.accountId));
        return;
      }
      if (event.type === 'EmojiFetchRequested') {
        await cacheRemoteEmoji(core, BigInt(event.payload.emojiId));
        return;
      }
      // Transcoding can outlast the session timeout: keep the group membership alive meanwhile.
      const beat = setInterval(() => void ctx.heartbeat().catch(() => undefined), 3_000);
      try {
        const id = BigInt(event.payload.mediaId);
        const queued = await collection(core.db, mediaAttachments).findOne({ _id: id });
        const doc =
          queued && needsRedownload(queued)
            ? await cacheRemoteAttachment(core, id)
            : await processQueuedMedia(core, id);
        ctx.logger.debug({ mediaId: event.payload.mediaId, state: doc?.processing ?? 'gone' }, 'media processed');
      } finally {
        clearInterval(beat);
      }
    },
  });
}
