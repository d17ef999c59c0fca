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

// Every metric lives on the process registry: these declare one there.
export function counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

export function gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string = never>(
  name: string,
  help: string,
  buckets: number[],
  labelNames: readonly L[] = [],
) {
  return new Histogram<L>({ name, help, buckets, labelNames, registers: [registry] });
}

export const eventsProduced = counter('events_produced_total', 'Events published to Kafka, by topic and event type.', [
  'topic',
  'type',
]);

export const eventsConsumed = counter(
  'events_consumed_total',
  'Events consumed by a pipeline, by outcome (ok, skipped, retried, dead_lettered, duplicate).',
  ['pipeline', 'topic', 'type', 'outcome'],
);

export const eventHandlerSeconds = histogram(
  'event_handler_duration_seconds',
  'Time a pipeline spends handling one batch of events.',
  [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  ['pipeline'],
);

export const consumerLag = gauge(
  'kafka_consumer_lag',
  'Messages between a consumer group committed offset and the end of the partition.',
  ['pipeline', 'topic', 'partition'],
);

export const outboxRelayed = counter(
  'outbox_relayed_total',
  'Pending outbox events published by the relay after their writer did not publish them.',
);
