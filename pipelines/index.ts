// Every pipeline (consumer group) by name: `node services/main.ts pipeline <name>` runs one, the
// `all` role runs them all. A pipeline starts its consumers and returns how to stop them (finish
// the batch in flight, commit, leave the group). Add an entry per pipeline (one line each).
import type { Core } from '../services/core/context.ts';
import { runOutboxRelay } from './outbox/index.ts';
import { runMailerPipeline } from './mailer/index.ts';
import { runMediaPipeline } from './media/index.ts';
import { runScheduler } from './scheduler/index.ts';
import { runFanOutPipeline } from './fanout/index.ts';
import { runNotificationsPipeline } from './notifications/index.ts';
import { runSearchIndexPipeline } from './search-index/index.ts';
import { runTrendsPipeline } from './trends/index.ts';
import { runLinkPreviewsPipeline } from './link-previews/index.ts';
import { runDeliveryPipeline } from './delivery/index.ts';
import { runWebPushPipeline } from './webpush/index.ts';
import { runIngressPipeline } from './ingress/index.ts';
import { runAnnualReportsPipeline } from './annual-reports/index.ts';

export interface RunningPipeline {
  stop(): Promise<void>;
}

export type PipelineFactory = (core: Core) => Promise<RunningPipeline>;

export const pipelines: Record<string, PipelineFactory> = {
  outbox: async (core) => runOutboxRelay(core),
  mailer: (core) => runMailerPipeline(core),
  media: (core) => runMediaPipeline(core),
  scheduler: async (core) => runScheduler(core),
  fanout: (core) => runFanOutPipeline(core),
  notifications: (core) => runNotificationsPipeline(core),
  'search-index': (core) => runSearchIndexPipeline(core),
  trends: (core) => runTrendsPipeline(core),
  'link-previews': (core) => runLinkPreviewsPipeline(core),
  delivery: (core) => runDeliveryPipeline(core),
  webpush: (core) => runWebPushPipeline(core),
  ingress: (core) => runIngressPipeline(core),
  'annual-reports': (core) => runAnnualReportsPipeline(core),
};
