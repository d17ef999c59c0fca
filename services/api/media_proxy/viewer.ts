// Who asks for a proxied file: the account of a bearer token, else of the pages' session cookie
// (images on our pages are loaded with the cookie, never with a token), else nobody.
import type { FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { Core } from '../../core/context.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import { SESSION_COOKIE, webSessionAccount } from '../../core/oauth/sessions.ts';

export async function mediaViewer(core: Core, request: FastifyRequest): Promise<CachedAccount | null> {
  if (request.auth?.account) return request.auth.account;
  const header = request.headers.cookie;
  if (!header) return null;
  return webSessionAccount(core, fastifyCookie.parse(header)[SESSION_COOKIE]);
}
