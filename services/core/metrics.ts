// Prometheus metrics: one registry per process, exposed at /metrics (see the API/infra roles).
// Metrics are module-level singletons: registering the same name twice throws in prom-client.
import { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();

let defaultsCollected = false;
/** Process metrics (CPU, memory, event loop lag); call once from a process entry, not from tests. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}

export const eventsProduced = new Counter({
  name: 'events_produced_total',
  help: 'Events published to Kafka, by topic and event type.',
  labelNames: ['topic', 'type'] as const,
  registers: [registry],
});

export const eventsConsumed = new Counter({
  name: 'events_consumed_total',
  help: 'Events consumed by a pipeline, by outcome (ok, skipped, retried, dead_lettered, duplicate).',
  labelNames: ['pipeline', 'topic', 'type', 'outcome'] as const,
  registers: [registry],
});

export const eventHandlerSeconds = new Histogram({
  name: 'event_handler_duration_seconds',
  help: 'Time a pipeline spends handling one batch of events.',
  labelNames: ['pipeline'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const consumerLag = new Gauge({
  name: 'kafka_consumer_lag',
  help: 'Messages between a consumer group committed offset and the end of the partition.',
  labelNames: ['pipeline', 'topic', 'partition'] as const,
  registers: [registry],
});

export const outboxRelayed = new Counter({
  name: 'outbox_relayed_total',
  help: 'Pending outbox events published by the relay after their writer did not publish them.',
  registers: [registry],
});
