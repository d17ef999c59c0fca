// What every admin route shares: a user token with the route's admin scope AND a role holding the
// route's permission (Mastodon's policies), else 403; ids, pages and the acting moderator.
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Document } from 'mongodb';
import type { Core } from '../../core/context.ts';
import type { Id } from '../../core/ids.ts';
import type { Permission } from '../../core/roles/permissions.ts';
import type { CollectionDef } from '../../core/db/mongo.ts';
import { findPageIn } from '../../core/db/pages.ts';
import { requirePermission, type UserAuth } from '../plugins/auth.ts';
import { pageParams, type PageParams, setRecordPageLinks } from '../pagination.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Admin routes: the role permission the caller needs (core/roles/permissions.ts). */
    permission?: Permission;
  }
}

import { CursorQuery, IdParams, idParam } from '../params.ts';

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
  def: CollectionDef<T>,
  filter: object,
  prevParam: 'min_id' | 'since_id',
): Promise<T[]> {
  const page = adminPage(request.query);
  const docs = await findPageIn(core.db, def, filter, page);
  setRecordPageLinks(core, request, reply, docs, page.limit, prevParam);
  return docs;
}

/** A request to a `/:id` route (its params validated by IdParams). */
type IdRequest = FastifyRequest & { params: { id: string } };

/** What an admin record resource (domain blocks, IP blocks, ...) has: its list, getter, deleter and renderer. */
export interface AdminRecords<T extends Document & { _id: Id }, R> {
  /** The collection listed, the filter of the listed documents, and the parameter of the Link header's prev. */
  list: [def: CollectionDef<T>, filter: object, prevParam: 'min_id' | 'since_id'];
  /** Loads one record by id (404 when missing). */
  get: (core: Core, id: Id) => Promise<T>;
  /** Deletes one record as the acting moderator. */
  remove: (core: Core, id: Id, actor: Id) => Promise<unknown>;
  render: (doc: T) => R;
}

/**
 * The read and write route configs of an admin record resource and its list, show and delete
 * routes (options with their handler), for the area to register under its literal paths.
 */
export function adminRecordRoutes<T extends Document & { _id: Id }, R>(
  core: Core,
  resource: string,
  permission: Permission,
  records: AdminRecords<T, R>,
) {
  const scopes = adminScopes(resource);
  const read = adminConfig(scopes.read, permission);
  const write = adminConfig(scopes.write, permission);
  const [def, filter, prevParam] = records.list;
  return {
    read,
    write,
    /** One page of the collection, newest first, each document rendered. */
    list: {
      schema: { querystring: PageQuery },
      config: read,
      handler: async (request: FastifyRequest, reply: FastifyReply): Promise<R[]> =>
        (await listPage(core, request, reply, def, filter, prevParam)).map((doc) => records.render(doc)),
    },
    /** The record by its id, rendered. */
    show: {
      schema: { params: IdParams },
      config: read,
      handler: async (request: IdRequest): Promise<R> =>
        records.render(await records.get(core, idParam(request.params.id))),
    },
    /** Creates a record from the body (missing body: `{}`) as the acting moderator, rendered. */
    create: <B extends TObject>(body: B, run: (input: Static<B>, actor: Id) => Promise<T>) => ({
      schema: { body: Type.Optional(body) },
      config: write,
      handler: async (request: FastifyRequest & { body?: Static<B> }): Promise<R> =>
        records.render(await run(request.body ?? ({} as Static<B>), moderator(request).account._id)),
    }),
    /** Updates the record by its id from the body as the acting moderator, rendered. */
    update: <B extends TObject>(body: B, run: (id: Id, input: Static<B>, actor: Id) => Promise<T>) => ({
      schema: { params: IdParams, body: Type.Optional(body) },
      config: write,
      handler: async (request: IdRequest & { body?: Static<B> }): Promise<R> =>
        records.render(
          await run(idParam(request.params.id), request.body ?? ({} as Static<B>), moderator(request).account._id),
        ),
    }),
    /** Deletes the record as the acting moderator; Mastodon answers `{}`. */
    remove: {
      schema: { params: IdParams },
      config: write,
      handler: async (request: IdRequest): Promise<Record<string, never>> => {
        await records.remove(core, idParam(request.params.id), moderator(request).account._id);
        return {};
      },
    },
  };
}
