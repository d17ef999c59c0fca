// The log-in half-way through: the password was right and the user has two-factor on, so the next
// POST to /auth/sign_in must bring a code (Mastodon keeps attempt_user_id in its session). A random
// id in an httpOnly cookie, the user and the page to return to in Redis for ten minutes.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core/context.ts';
import type { Id } from '../core/ids.ts';
import { hashSecret } from '../core/auth/tokens.ts';

const COOKIE = '_signin_attempt';
const TTL_SECONDS = 10 * 60;

export interface SignInAttempt {
  userId: Id;
  returnTo: string;
}

const key = (id: string) => `signin_attempt:${hashSecret(id)}`;

export async function startSignInAttempt(core: Core, reply: FastifyReply, attempt: SignInAttempt): Promise<void> {
  const id = randomBytes(24).toString('base64url');
  await core.redis.set(
    key(id),
    JSON.stringify({ userId: String(attempt.userId), returnTo: attempt.returnTo }),
    'EX',
    TTL_SECONDS,
  );
  reply.setCookie(COOKIE, id, {
    httpOnly: true,
    secure: core.config.localHttps,
    sameSite: 'lax',
    path: '/auth',
    maxAge: TTL_SECONDS,
  });
}

export async function currentSignInAttempt(core: Core, request: FastifyRequest): Promise<SignInAttempt | null> {
  const id = request.cookies[COOKIE];
  if (!id || id.length > 100) return null;
  const raw = await core.redis.get(key(id));
  if (!raw) return null;
  const parsed = JSON.parse(raw) as { userId: string; returnTo: string };
  return { userId: BigInt(parsed.userId), returnTo: parsed.returnTo };
}

export async function endSignInAttempt(core: Core, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const id = request.cookies[COOKIE];
  if (id && id.length <= 100) await core.redis.del(key(id));
  reply.clearCookie(COOKIE, { path: '/auth', secure: core.config.localHttps, httpOnly: true, sameSite: 'lax' });
}
