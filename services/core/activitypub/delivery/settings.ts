// Tunables of outbound delivery. Defaults follow Mastodon where it has a number (16 retries,
// per-host breaker) and the limits (connect 10 s, total 30 s); tests shorten them.
export interface DeliverySettings {
  /** Delay before retry n (n = 1..16) of one job; the job is dropped after the last one. */
  retryDelaysMs: readonly number[];
  /**
   * Delay topics `<prefix>.delivery.delay.<ms>`: a waiting job hops through the first (shortest)
   * one until it is due, so each host's waiting jobs form one FIFO queue. Each topic holds jobs of
   * one fixed delay, so its partitions are in due order and a paused partition never hides an
   * earlier job. (Longer tiers are consumed too, for jobs queued by a deployment that used them.)
   */
  delayTiersMs: readonly number[];
  /** Consecutive failed attempts to a host, spanning at least `breakerMinSpanMs`, that open its breaker. */
  breakerFailures: number;
  breakerMinSpanMs: number;
  /** How often a parked (unavailable) host gets one probe delivery. */
  probeIntervalMs: number;
  /** Jobs older than this are dropped instead of being sent (retry horizon, about a week). */
  maxAgeMs: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** Bytes of a response body read at most (the rest is discarded, the connection closed). */
  maxResponseBytes: number;
  /** Concurrent POSTs per process. */
  concurrency: number;
  /** Concurrent POSTs to one host (its keep-alive pool size). */
  perHostConnections: number;
  /**
   * How long a batch waits for its slowest host (0: until every attempt ends). Past it, unfinished
   * jobs go to the shortest delay tier and the consumer moves on, so a silent server does not hold
   * the consumer for the whole timeout; the price is that, under load, a host can get one
   * object's activities out of order. Off by default: order matters more.
   */
  batchDeadlineMs: number;
  /** Partitions of the delivery and delay topics (more partitions: more processes can share the work). */
  partitions: number;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  // 16 retries over about six days (Mastodon: 16 retries, n^4 + 15 s, about three days).
  retryDelaysMs: [
    15 * SECOND,
    1 * MINUTE,
    2 * MINUTE,
    5 * MINUTE,
    10 * MINUTE,
    20 * MINUTE,
    40 * MINUTE,
    1 * HOUR,
    2 * HOUR,
    3 * HOUR,
    4 * HOUR,
    6 * HOUR,
    12 * HOUR,
    24 * HOUR,
    36 * HOUR,
    48 * HOUR,
  ],
  delayTiersMs: [5 * SECOND],
  breakerFailures: 8,
  breakerMinSpanMs: 30 * MINUTE,
  probeIntervalMs: 10 * MINUTE,
  maxAgeMs: 7 * 24 * HOUR,
  connectTimeoutMs: 10 * SECOND,
  totalTimeoutMs: 30 * SECOND,
  maxResponseBytes: 64 * 1024,
  concurrency: 128,
  perHostConnections: 8,
  batchDeadlineMs: 0,
  partitions: 16,
};

type Env = Record<string, string | undefined>;

function ms(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`Invalid configuration: ${name} must be a whole number, got "${v}"`);
  return Number(v);
}

/** Settings from DELIVERY_* variables (seconds unless the name says otherwise). */
export function deliverySettingsFromEnv(env: Env = process.env): DeliverySettings {
  const d = DEFAULT_DELIVERY_SETTINGS;
  const list = env.DELIVERY_RETRY_DELAYS_MS;
  const tiers = env.DELIVERY_DELAY_TIERS_MS;
  const parseList = (name: string, v: string) => {
    const out = v.split(',').map((s) => s.trim());
    if (out.length === 0 || out.some((s) => !/^\d+$/.test(s) || Number(s) <= 0))
      throw new Error(`Invalid configuration: ${name} must be a comma-separated list of milliseconds`);
    return out.map(Number);
  };
  return {
    retryDelaysMs: list ? parseList('DELIVERY_RETRY_DELAYS_MS', list) : d.retryDelaysMs,
    delayTiersMs: tiers ? parseList('DELIVERY_DELAY_TIERS_MS', tiers).sort((a, b) => a - b) : d.delayTiersMs,
    breakerFailures: Math.max(1, ms(env, 'DELIVERY_BREAKER_FAILURES', d.breakerFailures)),
    breakerMinSpanMs: ms(env, 'DELIVERY_BREAKER_MIN_SPAN_MS', d.breakerMinSpanMs),
    probeIntervalMs: ms(env, 'DELIVERY_PROBE_INTERVAL_MS', d.probeIntervalMs),
    maxAgeMs: ms(env, 'DELIVERY_MAX_AGE_MS', d.maxAgeMs),
    connectTimeoutMs: ms(env, 'DELIVERY_CONNECT_TIMEOUT_MS', d.connectTimeoutMs),
    totalTimeoutMs: ms(env, 'DELIVERY_TIMEOUT_MS', d.totalTimeoutMs),
    maxResponseBytes: ms(env, 'DELIVERY_MAX_RESPONSE_BYTES', d.maxResponseBytes),
    concurrency: Math.max(1, ms(env, 'DELIVERY_CONCURRENCY', d.concurrency)),
    perHostConnections: Math.max(1, ms(env, 'DELIVERY_HOST_CONNECTIONS', d.perHostConnections)),
    batchDeadlineMs: ms(env, 'DELIVERY_BATCH_DEADLINE_MS', d.batchDeadlineMs),
    partitions: Math.max(1, ms(env, 'DELIVERY_PARTITIONS', d.partitions)),
  };
}
