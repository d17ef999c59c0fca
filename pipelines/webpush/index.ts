// The webpush pipeline: delivers every new notification (NotificationCreated) to the recipient's
// Web Push subscriptions (services/core/push/dispatch.ts). A push service answering 429/5xx (or not
// answering) makes the event fail, so the runtime retries it through the pipeline's retry topic with
// backoff; sends that succeeded are recorded per notification and subscription and not repeated.
import type { Core } from '../../services/core/context.ts';
import { dispatchWebPush } from '../../services/core/push/dispatch.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';

export const TYPES = ['NotificationCreated'] as const;

export type WebPushPipelineOptions = PipelineOverrides<'NotificationCreated'>;

export function runWebPushPipeline(core: Core, opts: WebPushPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'webpush',
    types: TYPES,
    partitionsConsumedConcurrently: 4,
    ...opts,
    async handleEvent(event, ctx) {
      if (event.payload.filtered) return;
      await dispatchWebPush(core, BigInt(event.payload.notificationId), {
        logger: ctx.logger,
        once: (key, effect) => ctx.dedup.once(key, effect),
      });
    },
  });
}
