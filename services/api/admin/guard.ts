// What every admin route shares: a user token with the route's admin scope AND a role holding the
// route's permission (Mastodon's policies), else 403; ids, pages and the acting moderator.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Collection, Document } from 'mongodb';
import type { Core } from '../../core/context.ts';
import type { Id } from '../../core/ids.ts';
import type { Permission } from '../../core/roles/permissions.ts';
import { collection, type CollectionDef } from '../../core/db/mongo.ts';
import { requirePermission, type UserAuth } from '../plugins/auth.ts';
import { findPage, pageParams, type PageParams, setRecordPageLinks } from '../pagination.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Admin routes: the role permission the caller needs (core/roles/permissions.ts). */
    permission?: Permission;
  }
}

import { CursorQuery, idParam } from '../params.ts';

export { IdParams, idParam } from '../params.ts';

export const PageQuery = CursorQuery;

/** Admin lists: 100 by default, 200 at most. */
export function adminPage(query: unknown): PageParams {
  return pageParams(query, { defaultLimit: 100, maxLimit: 200 });
}

/** Read and write scopes of an admin resource, as Mastodon's controllers declare them. */
export function adminScopes(resource: string | null): { read: string[]; write: string[] } {
  return resource
    ? { read: ['admin:read', `admin:read:${resource}`], write: ['admin:write', `admin:write:${resource}`] }
    : { read: ['admin:read'], write: ['admin:write'] };
}

/** Route config for an admin route. */
export function adminConfig(scopes: string[], permission: Permission) {
  return { auth: { scopes, user: 'required' as const, staff: true }, permission };
}

/**
 * Enforces `config.permission` on every route of the admin plugin before its input is validated,
 * so a caller without the permission learns nothing about the route's parameters. A route without
 * a permission is a start-up error.
 */
export function enforcePermissions(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD' || route.method === 'OPTIONS') return;
    if (!(route.config as { permission?: Permission } | undefined)?.permission)
      throw new Error(`admin route without a permission: ${String(route.method)} ${route.url}`);
  });
  app.addHook('preValidation', async (request) => {
    const permission = request.routeOptions.config?.permission;
    if (permission) await requirePermission(request, permission);
  });
}

/** The acting moderator (the route's permission was checked already). */
export function moderator(request: FastifyRequest): UserAuth {
  return request.auth as UserAuth;
}

export type AdminCore = Core;

/** One page of an admin collection, newest first, with its Link header. */
export async function listPage<T extends Document & { _id: Id }>(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  coll: Collection<T>,
  filter: object,
  prevParam: 'min_id' | 'since_id',
): Promise<T[]> {
  const page = adminPage(request.query);
  const docs = await findPage(coll, filter, page);
  setRecordPageLinks(core, request, reply, docs, page.limit, prevParam);
  return docs;
}

/** A request to a `/:id` route (its params validated by IdParams). */
type IdRequest = FastifyRequest & { params: { id: string } };

/** The handler of an admin list route: one page of the collection, each document rendered. */
export function listHandler<T extends Document & { _id: Id }, R>(
  core: Core,
  def: CollectionDef<T>,
  filter: object,
  prevParam: 'min_id' | 'since_id',
  render: (doc: T) => R,
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<R[]> =>
    (await listPage(core, request, reply, collection(core.db, def), filter, prevParam)).map((doc) => render(doc));
}

/** The handler of an admin show route: the record by its id (the getter 404s a missing one), rendered. */
export function showHandler<T, R>(core: Core, get: (core: Core, id: Id) => Promise<T>, render: (doc: T) => R) {
  return async (request: IdRequest): Promise<R> => render(await get(core, idParam(request.params.id)));
}

/** The handler of an admin delete route, done as the acting moderator; Mastodon answers `{}`. */
export function deleteHandler(core: Core, remove: (core: Core, id: Id, actor: Id) => Promise<unknown>) {
  return async (request: IdRequest): Promise<Record<string, never>> => {
    await remove(core, idParam(request.params.id), moderator(request).account._id);
    return {};
  };
}
