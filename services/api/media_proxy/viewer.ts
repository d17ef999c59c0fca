// Who asks for a proxied file: the account of a bearer token, else of the pages' session cookie
// (images on our pages are loaded with the cookie, never with a token), else nobody.
import type { FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { Core } from '../../core/context.ts';
import { collection } from '../../core/db/mongo.ts';
import { accounts, type CachedAccount } from '../../core/model/accounts.ts';
import { users } from '../../core/model/users.ts';
import { SESSION_COOKIE, webSessionUser } from '../../core/oauth/sessions.ts';

export async function mediaViewer(core: Core, request: FastifyRequest): Promise<CachedAccount | null> {
  if (request.auth?.account) return request.auth.account;
  const header = request.headers.cookie;
  if (!header) return null;
  const userId = await webSessionUser(core, fastifyCookie.parse(header)[SESSION_COOKIE]);
  if (userId === null) return null;
  const user = await collection(core.db, users).findOne({ _id: userId });
  if (!user || user.disabled || !user.approved) return null;
  return collection(core.db, accounts).findOne(
    { _id: user.accountId, suspendedAt: null },
    { projection: { privateKeyPem: 0 } },
  );
}
