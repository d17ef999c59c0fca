// Fixed-window rate limits in Redis, as Mastodon counts them (windows aligned to epoch multiples of
// the period). Used for request throttles (sign-up per IP, media uploads per user) and for
// application limits (statuses per account). The API turns a Verdict into X-RateLimit-* headers.
import { incrementExpiring, type Redis } from './db/redis.ts';

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
  const count = await incrementExpiring(redis, key, periodMs + 1000);
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
  // Mastodon's throttle_login_attempts/ip and /email (the account being logged in to, or the
  // address typed): every POST to /auth/sign_in counts, the two-factor code's too.
  loginPerIp: { family: 'login_ip', limit: 25, periodSeconds: 5 * 60 },
  loginPerAccount: { family: 'login_account', limit: 25, periodSeconds: 60 * 60 },
} as const satisfies Record<string, RateLimitRule>;

/** The address a per-IP throttle counts: an IPv6 address by its /64, as Mastodon's rack-attack does. */
export function throttleableIp(ip: string): string {
  if (!ip.includes(':') || ip.startsWith('::ffff:')) return ip.replace(/^::ffff:/, '');
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}
