// Delivery metrics on the process registry (/metrics): attempts by outcome (deliveries per second
// is their rate), failures by class, and per-domain queue depth and oldest undelivered age.
import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from '../../metrics.ts';

export const deliveriesTotal = new Counter({
  name: 'activitypub_deliveries_total',
  help: 'Delivery jobs by outcome: delivered, failed (will retry), rejected (4xx, final), gave_up, parked, deferred, duplicate, dropped.',
  labelNames: ['outcome', 'activity'] as const,
  registers: [registry],
});

export const deliveryFailures = new Counter({
  name: 'activitypub_delivery_failures_total',
  help: 'Failed delivery attempts by class: http_4xx, http_429, http_5xx, timeout, connect, dns, tls, refused_address, other.',
  labelNames: ['class'] as const,
  registers: [registry],
});

export const deliverySeconds = new Histogram({
  name: 'activitypub_delivery_duration_seconds',
  help: 'Time of one signed POST to an inbox, answered or failed.',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const deliveryQueueDepth = new Gauge({
  name: 'activitypub_delivery_queue_depth',
  help: 'Jobs waiting for a failing or unavailable domain (in delay topics or parked).',
  labelNames: ['domain'] as const,
  registers: [registry],
});

export const deliveryOldestAge = new Gauge({
  name: 'activitypub_delivery_oldest_undelivered_seconds',
  help: 'Age of the oldest undelivered job of a failing or unavailable domain (since its first failure).',
  labelNames: ['domain'] as const,
  registers: [registry],
});

export const deliveryBreakersOpen = new Gauge({
  name: 'activitypub_delivery_breakers_open',
  help: 'Domains whose circuit breaker is open (deliveries parked).',
  registers: [registry],
});
