// The browser session of the pages: an httpOnly, SameSite=Lax cookie holding a random id (Secure
// when LOCAL_HTTPS), the user id behind it in Redis (core/oauth/sessions.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core/context.ts';
import type { UserDoc } from '../core/model/users.ts';
import { findUser } from '../core/users/queries.ts';
import {
  createWebSession,
  destroyWebSession,
  touchWebSession,
  webSessionUser,
  SESSION_COOKIE,
  SESSION_TTL_SECONDS,
  type WebSessionClient,
} from '../core/oauth/sessions.ts';

export { SESSION_COOKIE };

export function sessionId(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE];
}

function client(request: FastifyRequest): WebSessionClient {
  const ua = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

export async function sessionUser(core: Core, request: FastifyRequest): Promise<UserDoc | null> {
  const userId = await webSessionUser(core, sessionId(request));
  if (userId === null) return null;
  await touchWebSession(core, sessionId(request), client(request));
  return findUser(core, userId);
}

/** A fresh session id at every log-in (no session fixation). */
export async function startSession(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserDoc,
): Promise<void> {
  await destroyWebSession(core, sessionId(request));
  const id = await createWebSession(core, user._id, client(request));
  reply.setCookie(SESSION_COOKIE, id, {
    httpOnly: true,
    secure: core.config.localHttps,
    sameSite: 'lax',
    path: '/',
    maxAge: SESSION_TTL_SECONDS,
  });
}

export async function endSession(core: Core, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await destroyWebSession(core, sessionId(request));
  reply.clearCookie(SESSION_COOKIE, { path: '/', secure: core.config.localHttps, httpOnly: true, sameSite: 'lax' });
}
