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

/** Mastodon's default throttles and application limits (conventions §6). */
export const RATE_LIMITS = {
  signUp: { family: 'signup', limit: 5, periodSeconds: 30 * 60 },
  appRegistration: { family: 'apps', limit: 5, periodSeconds: 10 * 60 },
  mediaUpload: { family: 'media', limit: 30, periodSeconds: 30 * 60 },
  statuses: { family: 'statuses', limit: 300, periodSeconds: 3 * 3600 },
  statusEdits: { family: 'status_edits', limit: 300, periodSeconds: 3 * 3600 },
  deletes: { family: 'deletes', limit: 30, periodSeconds: 30 * 60 },
  follows: { family: 'follows', limit: 400, periodSeconds: 24 * 3600 },
  emailConfirmationPerIp: { family: 'confirmations_ip', limit: 25, periodSeconds: 5 * 60 },
  emailConfirmationPerUser: { family: 'confirmations_user', limit: 5, periodSeconds: 30 * 60 },
  // Mastodon's throttle_password_resets/ip and /email.
  passwordResetPerIp: { family: 'password_resets_ip', limit: 25, periodSeconds: 5 * 60 },
  passwordResetPerEmail: { family: 'password_resets_email', limit: 5, periodSeconds: 30 * 60 },
} as const satisfies Record<string, RateLimitRule>;
