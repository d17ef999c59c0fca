// The delivery pipeline: the planner (consumer group `delivery`: events → one DeliveryRequested
// job per target inbox) and the worker (consumer group `delivery-worker`: signed POSTs, retries
// through delay topics, per-host backoff and circuit breaker). `pipeline delivery` runs both;
// more processes share both groups' partitions.
import type { Core } from '../../services/core/context.ts';
import { loadEnvironment } from '../../services/core/config.ts';
import { deliverySettingsFromEnv, type DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import { runDeliveryPlanner, type DeliveryPlannerOptions } from './planner.ts';
import { runDeliveryWorker, type DeliveryWorkerOptions } from './worker.ts';

export interface DeliveryPipelineOptions {
  settings?: Partial<DeliverySettings>;
  planner?: DeliveryPlannerOptions;
  worker?: Omit<DeliveryWorkerOptions, 'settings'>;
}

export async function runDeliveryPipeline(
  core: Core,
  opts: DeliveryPipelineOptions = {},
): Promise<{ stop(): Promise<void> }> {
  // DELIVERY_* variables come from the environment and .env, like the rest of the configuration.
  const settings: DeliverySettings = { ...deliverySettingsFromEnv(loadEnvironment()), ...opts.settings };
  const worker = await runDeliveryWorker(core, { ...opts.worker, settings });
  const planner = await runDeliveryPlanner(core, settings, opts.planner);
  return {
    async stop() {
      await planner.stop();
      await worker.stop();
    },
  };
}
