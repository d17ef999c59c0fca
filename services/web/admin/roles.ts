// Roles and permissions (manage_roles, Mastodon's /admin/roles): the roles by rank with their
// permissions, and custom roles created, changed and deleted through the core role operations,
// which only let a staff member grant what they hold, below their own rank.
import type { FastifyRequest } from 'fastify';
import { listResource, type AdminArea } from './kit.ts';
import type { RoleDoc } from '../../core/model/roles.ts';
import { countUsersWithRole } from '../../core/users/queries.ts';
import { PERMISSION_FLAGS, permissionMask, type Permission } from '../../core/roles/permissions.ts';
import { findRole, listRoles } from '../../core/roles/roles.ts';
import { createCustomRole, deleteCustomRole, permissionNames, updateCustomRole } from '../../core/moderation/roles.ts';
import { notFound, validationFailed } from '../../core/errors.ts';

const PERMISSIONS = Object.keys(PERMISSION_FLAGS) as Permission[];

const rolePages: AdminArea = (app, kit) => {
  const { core, asStaff, view, attempt, field, idParam } = kit;

  async function roleOf(request: FastifyRequest): Promise<RoleDoc | null> {
    const id = idParam(request);
    return id === null ? null : findRole(core, id);
  }

  function formInput(request: FastifyRequest) {
    const position = Number(field(request, 'position') || '0');
    if (!Number.isInteger(position) || Math.abs(position) > 100_000) throw validationFailed('Position is not a number');
    const body = (request.body ?? {}) as Record<string, unknown>;
    const raw = body.permissions ?? body['permissions[]'] ?? [];
    const names = (Array.isArray(raw) ? raw : [raw]).filter((n): n is Permission =>
      PERMISSIONS.includes(n as Permission),
    );
    return { position, permissions: permissionMask(names) };
  }

  const rolesPage = listResource(app, kit, 'manage_roles', {
    paths: { list: '/admin/roles', remove: '/admin/roles/:id/delete' },
    template: 'roles',
    load: async () => {
      const list = await listRoles(core, 'descending');
      const counts = await Promise.all(list.map((r) => countUsersWithRole(core, r._id)));
      return {
        roles: list.map((r, i) => ({
          ...r,
          id: String(r._id),
          users: counts[i],
          names: permissionNames(r.permissions),
        })),
        permissions: PERMISSIONS,
      };
    },
    create: (request, me) =>
      createCustomRole(core, { name: field(request, 'name', 200), ...formInput(request) }, me.role, me.account._id),
    remove: async (id, me) => {
      const role = await findRole(core, id);
      if (!role) throw notFound();
      return deleteCustomRole(core, role, me.role, me.account._id);
    },
  });

  app.get<{ Params: { id: string } }>(
    '/admin/roles/:id/edit',
    asStaff('manage_roles', async (request, reply, me) => {
      const role = await roleOf(request);
      if (!role) return reply.callNotFound();
      return view(reply, me, 'role_edit', 'admin.roles.edit', {
        role: { ...role, id: String(role._id), names: permissionNames(role.permissions) },
        permissions: PERMISSIONS,
        error: null,
      });
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/admin/roles/:id',
    { preHandler: app.csrfProtection },
    asStaff('manage_roles', async (request, reply, me) => {
      const role = await roleOf(request);
      if (!role) return reply.callNotFound();
      const error = await attempt(() => updateCustomRole(core, role, formInput(request), me.role, me.account._id));
      if (error) return rolesPage(reply, me, error);
      return reply.redirect('/admin/roles', 303);
    }),
  );
};

export default rolePages;
