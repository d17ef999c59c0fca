// Authentication and authorisation for every route. A route declares what it accepts in its
// `config.auth`; this plugin resolves the token once (preValidation, so body-borne `access_token`
// works too) and enforces the declaration with Mastodon's status codes and messages.
//
//   config: { auth: { scopes: ['read', 'read:statuses'], user: 'required' } }
//
// user: 'required' (default when scopes are given) — a user token of a usable login;
//       'optional' — anonymous allowed, a token if present must be valid;
//       'app'      — an app or user token (e.g. apps/verify_credentials);
//       'none'     — public, the token is ignored.
// staff: true (admin routes) — a token without a user (an app token, even with admin scopes) gets
//       403 `This action is not allowed`, as Mastodon's policies answer, instead of the 422.
// allowUnconfirmed: true lets a user who has not confirmed the e-mail yet through (only for
// POST /api/v1/emails/confirmations and its check). Admin routes add `await requirePermission(
// request, 'manage_users')` (Mastodon's role permission names, core/roles/permissions.ts).
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import { touchAccessToken } from '../../core/oauth/tokens.ts';
import type { UserDoc } from '../../core/model/users.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { resolveToken, type AuthContext } from '../../core/auth/resolveToken.ts';
import { recordActivity } from '../../core/feeds/activity.ts';
import { scopesAllow } from '../../core/auth/scopes.ts';
import { hasPermission, type Permission } from '../../core/roles/permissions.ts';
import { roleOfUser, type EffectiveRole } from '../../core/roles/roles.ts';
import { ApiError, forbidden, outsideScopes, unauthorized } from '../errors.ts';

export { resolveToken, type AuthContext };

export interface AuthRequirement {
  scopes?: string[];
  user?: 'required' | 'optional' | 'app' | 'none';
  /** An admin route: a token without a user is refused with 403, as Mastodon's policy check does. */
  staff?: boolean;
  /** Let users who still have to confirm their e-mail through (POST /api/v1/emails/confirmations). */
  allowUnconfirmed?: boolean;
}

/** A request whose route required a user: user and account are present. */
export interface UserAuth extends AuthContext {
  user: UserDoc;
  account: AccountDoc;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    /** The Core of the app that received the request (for helpers such as requirePermission). */
    authCore: Core | null;
  }
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header) {
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    return m ? m[1].trim() : null;
  }
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof fromQuery === 'string' && fromQuery) return fromQuery;
  const body = request.body as Record<string, unknown> | undefined;
  const fromBody = body && typeof body === 'object' ? body.access_token : undefined;
  return typeof fromBody === 'string' && fromBody ? fromBody : null;
}

/** Mastodon refuses tokens of logins that cannot use the API (403 with the reason). */
function assertUsableLogin(auth: AuthContext, allowUnconfirmed = false): void {
  const { user, account } = auth;
  if (!user || !account) return;
  if (user.disabled || account.suspendedAt) throw forbidden('Your login is currently disabled');
  if (!user.confirmedAt) {
    if (allowUnconfirmed) return;
    throw forbidden('Your login is missing a confirmed e-mail address');
  }
  if (!user.approved) throw forbidden('Your login is currently pending approval');
}

export function requireUser(request: FastifyRequest): UserAuth {
  const auth = request.auth;
  if (!auth || !auth.user || !auth.account) throw new ApiError(422, 'This method requires an authenticated user');
  return auth as UserAuth;
}

/** The role of the authenticated user (everyone role when none). */
export async function roleOfRequest(request: FastifyRequest): Promise<EffectiveRole> {
  const { user } = requireUser(request);
  if (!request.authCore) throw new Error('auth plugin not registered');
  return roleOfUser(request.authCore, user);
}

/**
 * For admin routes: the authenticated user must hold `permission` through their role (Owner's
 * administrator flag holds all). 403 `This action is not allowed` otherwise.
 */
export async function requirePermission(request: FastifyRequest, permission: Permission): Promise<UserAuth> {
  const auth = requireUser(request);
  if (!hasPermission((await roleOfRequest(request)).permissions, permission)) throw forbidden();
  return auth;
}

export default fp(
  async function authPlugin(app: FastifyInstance, opts: { core: Core }) {
    app.decorateRequest('auth', null);
    app.decorateRequest('authCore', null);
    // Every API route states who may call it (scopes, or `user: 'none'` for public documents):
    // a route that forgets is a start-up error, not a silently public endpoint.
    const undeclared: string[] = [];
    app.addHook('onRoute', (route) => {
      const declared = (route.config as { auth?: AuthRequirement } | undefined)?.auth;
      if (route.url.startsWith('/api/') && route.method !== 'HEAD' && route.method !== 'OPTIONS' && !declared) {
        undeclared.push(`${String(route.method)} ${route.url}`);
      }
    });
    app.addHook('onReady', async () => {
      if (undeclared.length > 0) throw new Error(`API routes without an auth declaration: ${undeclared.join(', ')}`);
    });
    app.addHook('preValidation', async (request) => {
      request.authCore = opts.core;
      const req: AuthRequirement = request.routeOptions.config?.auth ?? { user: 'none' };
      const mode = req.user ?? (req.scopes && req.scopes.length > 0 ? 'required' : 'none');
      if (mode === 'none') return;
      const raw = bearerToken(request);
      const auth = raw ? await resolveToken(opts.core, raw) : null;
      if (raw && !auth && mode !== 'optional') throw unauthorized();
      if (!auth) {
        if (mode === 'optional') return;
        throw unauthorized();
      }
      if (!scopesAllow(auth.token.scopes, req.scopes ?? [])) throw outsideScopes();
      if (mode === 'required' && !auth.user) {
        if (req.staff) throw forbidden();
        throw new ApiError(422, 'This method requires an authenticated user');
      }
      assertUsableLogin(auth, req.allowUnconfirmed === true);
      // A signed-in user's API use keeps their home feed fed (hourly per process, so cheap).
      if (auth.user) await recordActivity(opts.core, auth.user);
      request.auth = auth;
      // Last use is bookkeeping (hourly resolution): it must not slow or fail the request.
      const last = auth.token.lastUsedAt?.getTime() ?? 0;
      if (Date.now() - last > 3_600_000) void touchAccessToken(opts.core, auth.token._id).catch(() => undefined);
    });
  },
  { name: 'auth' },
);
