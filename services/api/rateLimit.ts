// Route-side rate limiting: count a hit, send Mastodon's X-RateLimit-* headers, refuse with 429.
import type { FastifyReply } from 'fastify';
import type { Core } from '../core/context.ts';
import { hitRateLimit, rateLimitHeaders, type RateLimitRule } from '../core/rateLimit.ts';
import { ApiError } from './errors.ts';

export async function enforceRateLimit(
  core: Core,
  reply: FastifyReply,
  rule: RateLimitRule,
  subject: string,
): Promise<void> {
  const verdict = await hitRateLimit(core.redis, rule, subject);
  const headers = rateLimitHeaders(verdict);
  reply.headers(headers);
  if (!verdict.allowed) throw new ApiError(429, 'Too many requests', {}, headers);
}

export { RATE_LIMITS } from '../core/rateLimit.ts';
