// Every pipeline (consumer group) by name: `node services/main.ts pipeline <name>` runs one, the
// `all` role runs them all. A pipeline starts its consumers and returns how to stop them (finish
// the batch in flight, commit, leave the group). Add an entry per pipeline (one line each).
import type { Core } from '../services/core/context.ts';
import type { EventName } from '../schemas/index.ts';
import { PLANNED_EVENTS } from '../services/core/activitypub/delivery/plan.ts';
import { runOutboxRelay } from './outbox/index.ts';
import { BACKGROUND_FETCH } from './runtime/index.ts';
import { sharedConsumer, type SharedConsumer } from './runtime/sharedConsumer.ts';
import { runMailerPipeline, TYPES as mailerEvents } from './mailer/index.ts';
import { runMediaPipeline, TYPES as mediaEvents } from './media/index.ts';
import { runScheduler } from './scheduler/index.ts';
import { runFanOutPipeline, TYPES as fanOutEvents } from './fanout/index.ts';
import { runNotificationsPipeline, TYPES as notificationEvents } from './notifications/index.ts';
import { runSearchIndexPipeline, TYPES as searchIndexEvents } from './search-index/index.ts';
import { runTrendsPipeline, TYPES as trendEvents } from './trends/index.ts';
import { runLinkPreviewsPipeline, TYPES as linkPreviewEvents } from './link-previews/index.ts';
import { runDeliveryPipeline } from './delivery/index.ts';
import { runWebPushPipeline, TYPES as webPushEvents } from './webpush/index.ts';
import { runIngressPipeline, TYPES as ingressEvents } from './ingress/index.ts';
import { runRepliesPipeline, TYPES as repliesEvents } from './replies/index.ts';
import { runAnnualReportsPipeline, TYPES as annualReportEvents } from './annual-reports/index.ts';

export interface RunningPipeline {
  stop(): Promise<void>;
}

/**
 * The `all` role's shared consumers (ADR 0013), by latency class: `prompt` for what a reader or a
 * peer waits on, `background` for what may lag a few seconds. Neither has a member that waits on
 * another server.
 */
export interface SharedConsumers {
  prompt: SharedConsumer;
  background: SharedConsumer;
}

export function sharedConsumers(core: Core): SharedConsumers {
  return {
    // At most 1 s: a rebalance of the group (which holds up fan-out) waits for the fetch in flight.
    prompt: sharedConsumer(core, 'all-prompt', {
      partitionsConsumedConcurrently: 4,
      maxWaitTimeInMs: Math.min(1_000, core.config.kafkaFetchWaitMs),
    }),
    background: sharedConsumer(core, 'all-background', BACKGROUND_FETCH),
  };
}

/** Starts a pipeline; with `shared` (the `all` role) the ones that can read through a shared consumer do. */
export type PipelineFactory = (core: Core, shared?: SharedConsumers) => Promise<RunningPipeline>;

export const pipelines: Record<string, PipelineFactory> = {
  outbox: async (core) => runOutboxRelay(core),
  mailer: (core) => runMailerPipeline(core),
  media: (core) => runMediaPipeline(core),
  scheduler: async (core) => runScheduler(core),
  fanout: (core, shared) => runFanOutPipeline(core, { shared: shared?.prompt }),
  notifications: (core, shared) => runNotificationsPipeline(core, { shared: shared?.prompt }),
  'search-index': (core, shared) => runSearchIndexPipeline(core, { shared: shared?.background }),
  trends: (core, shared) => runTrendsPipeline(core, { shared: shared?.background }),
  'link-previews': (core) => runLinkPreviewsPipeline(core),
  delivery: (core, shared) => runDeliveryPipeline(core, { planner: { shared: shared?.prompt } }),
  webpush: (core) => runWebPushPipeline(core),
  ingress: (core) => runIngressPipeline(core),
  replies: (core) => runRepliesPipeline(core),
  'annual-reports': (core) => runAnnualReportsPipeline(core),
};

/**
 * The events each consumer group reads (`docs/EVENTS.md` is generated from this); the delivery
 * pipeline's worker is its own group. Every entry of `pipelines` has one, even if empty.
 */
export const consumedEvents: Record<string, readonly EventName[]> = {
  outbox: [],
  mailer: mailerEvents,
  media: mediaEvents,
  scheduler: [],
  fanout: fanOutEvents,
  notifications: notificationEvents,
  'search-index': searchIndexEvents,
  trends: trendEvents,
  'link-previews': linkPreviewEvents,
  delivery: PLANNED_EVENTS,
  'delivery-worker': ['DeliveryRequested'],
  webpush: webPushEvents,
  ingress: ingressEvents,
  replies: repliesEvents,
  'annual-reports': annualReportEvents,
};
