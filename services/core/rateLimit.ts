// Fixed-window rate limits in Redis, as Mastodon counts them (windows aligned to epoch multiples of
// the period). Used for request throttles (sign-up per IP, media uploads per user) and for
// application limits (statuses per account). The API turns a Verdict into X-RateLimit-* headers.
import type { Redis } from './db/redis.ts';

export interface RateLimitRule {
  /** Name of the throttle, part of the Redis key (e.g. 'signup', 'statuses'). */
  family: string;
  limit: number;
  periodSeconds: number;
}

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends. */
  resetAt: Date;
}

/** Counts one hit against `rule` for `subject` (an IP, an account id) and tells whether it is allowed. */
export async function hitRateLimit(redis: Redis, rule: RateLimitRule, subject: string): Promise<Verdict> {
  const periodMs = rule.periodSeconds * 1000;
  const windowStart = Math.floor(Date.now() / periodMs) * periodMs;
  const key = `ratelimit:${rule.family}:${subject}:${windowStart}`;
  const [[, count]] = (await redis
    .multi()
    .incr(key)
    .pexpire(key, periodMs + 1000)
    .exec()) as [[Error | null, number]];
  return {
    allowed: count <= rule.limit,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - count),
    resetAt: new Date(windowStart + periodMs),
  };
}

/** Mastodon's headers: reset as an ISO 8601 timestamp with microseconds. */
export function rateLimitHeaders(v: Verdict): Record<string, string> {
  return {
    'x-ratelimit-limit': String(v.limit),
    'x-ratelimit-remaining': String(v.remaining),
    'x-ratelimit-reset': v.resetAt.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
  };
}
