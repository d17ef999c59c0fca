// Delivery metrics on the process registry (/metrics): attempts by outcome (deliveries per second
// is their rate), failures by class, and per-domain queue depth and oldest undelivered age.
import { counter, gauge, histogram } from '../../metrics.ts';

export const deliveriesTotal = counter(
  'activitypub_deliveries_total',
  'Delivery jobs by outcome: delivered, failed (will retry), rejected (4xx, final), gave_up, parked, deferred, duplicate, dropped.',
  ['outcome', 'activity'],
);

export const deliveryFailures = counter(
  'activitypub_delivery_failures_total',
  'Failed delivery attempts by class: http_4xx, http_429, http_5xx, timeout, connect, dns, tls, refused_address, other.',
  ['class'],
);

export const deliverySeconds = histogram(
  'activitypub_delivery_duration_seconds',
  'Time of one signed POST to an inbox, answered or failed.',
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
);

export const deliveryQueueDepth = gauge(
  'activitypub_delivery_queue_depth',
  'Jobs waiting for a failing or unavailable domain (in delay topics or parked).',
  ['domain'],
);

export const deliveryOldestAge = gauge(
  'activitypub_delivery_oldest_undelivered_seconds',
  'Age of the oldest undelivered job of a failing or unavailable domain (since its first failure).',
  ['domain'],
);

export const deliveryBreakersOpen = gauge(
  'activitypub_delivery_breakers_open',
  'Domains whose circuit breaker is open (deliveries parked).',
);
