// The delivery planner: consumer group `<prefix>.delivery` over the status, interaction, graph,
// account and poll events. For each event a local account caused, it builds the activity once,
// works out the target inboxes (delivery/audience.ts) and publishes one DeliveryRequested job per
// inbox on the `delivery` topic, keyed by the inbox's host. A re-planned event (redelivery after a
// crash) publishes its jobs again; the worker's once-only record keeps each inbox from getting an
// activity twice.
import { randomUUID } from 'node:crypto';
import { CompressionTypes, type Message } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import { topicName } from '../../services/core/events/kafka.ts';
import { eventMessage } from '../../services/core/events/kafkaSink.ts';
import { planDelivery, PLANNED_EVENTS, type PlannedEvent } from '../../services/core/activitypub/delivery/plan.ts';
import type { DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';
import { DELIVERY_TOPIC } from './job.ts';

export type DeliveryPlannerOptions = PipelineOverrides<PlannedEvent>;

// Jobs go out in slices, so the worker starts on the first inboxes while the rest are sent;
// gzip makes a slice small, as its jobs share one body.
const SEND_CHUNK = 500;

export async function runDeliveryPlanner(
  core: Core,
  settings: DeliverySettings,
  opts: DeliveryPlannerOptions = {},
): Promise<Pipeline> {
  const topic = topicName(core.config, DELIVERY_TOPIC);
  const pipeline = await runPipeline({
    core,
    name: 'delivery',
    types: PLANNED_EVENTS,
    // No BACKGROUND_FETCH here: a peer waits on the plan (a fetch held 250 ms delayed every
    // delivery, and a post deleted meanwhile was never announced). Planning waits on MongoDB and Redis round trips, one event at a time per partition: under
    // load (a posting burst on a busy machine) one partition at a time fell 1 event/s behind 10 posts/s.
    partitionsConsumedConcurrently: 4,
    outputTopics: [{ topic: DELIVERY_TOPIC, partitions: settings.partitions }],
    ...opts,
    async handleEvent(event, ctx) {
      const started = Date.now();
      const plans = await planDelivery(core, event.type, event.payload);
      const plannedMs = Date.now() - started;
      for (const plan of plans) {
        const body = JSON.stringify(plan.activity);
        const createdAt = new Date();
        const messages: Message[] = [];
        for (const [inbox, recipient] of plan.inboxes) {
          const host = new URL(inbox).host.toLowerCase();
          messages.push(
            eventMessage({
              eventId: randomUUID(),
              type: 'DeliveryRequested',
              key: host,
              occurredAt: createdAt,
              payload: {
                activityId: plan.activityId,
                activityType: plan.activityType,
                inbox,
                signerAccountId: plan.signerAccountId,
                recipientAccountId: recipient,
                body,
                createdAt,
              },
            }).message,
          );
        }
        for (let i = 0; i < messages.length; i += SEND_CHUNK) {
          await ctx.send(
            [{ topic, messages: messages.slice(i, i + SEND_CHUNK), eventType: 'DeliveryRequested' }],
            CompressionTypes.GZIP,
          );
          await ctx.heartbeat();
        }
        const log = messages.length >= 100 ? ctx.logger.info.bind(ctx.logger) : ctx.logger.debug.bind(ctx.logger);
        log(
          {
            activity: plan.activityId,
            type: plan.activityType,
            inboxes: messages.length,
            planMs: plannedMs,
            publishMs: Date.now() - started - plannedMs,
            lagMs: started - event.occurredAt.getTime(),
          },
          'delivery planned',
        );
      }
    },
  });
  return pipeline;
}
