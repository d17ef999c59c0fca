// A page request over one of the rate limits: the 429 page with Retry-After, as Mastodon's
// rack-attack answers.
import type { FastifyReply } from 'fastify';
import type { Core } from '../core/context.ts';
import { hitRateLimit, type RATE_LIMITS } from '../core/rateLimit.ts';
import { messagePage } from './pages.ts';

/** Counts one hit of `rule` for `subject`; true (and the 429 page sent) when it is over the limit. */
export async function rateLimited(
  core: Core,
  reply: FastifyReply,
  rule: (typeof RATE_LIMITS)[keyof typeof RATE_LIMITS],
  subject: string,
): Promise<boolean> {
  const verdict = await hitRateLimit(core.redis, rule, subject);
  if (verdict.allowed) return false;
  reply.header('retry-after', String(Math.max(1, Math.ceil((verdict.resetAt.getTime() - Date.now()) / 1000))));
  await messagePage(reply, core, {
    status: 429,
    title: 'errors.title',
    lines: ['auth.too_many_requests'],
    translate: true,
  });
  return true;
}
