// Roles and permissions (manage_roles, Mastodon's /admin/roles): the roles by rank with their
// permissions, and custom roles created, changed and deleted through the core role operations,
// which only let a staff member grant what they hold, below their own rank.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import { collection } from '../../core/db/mongo.ts';
import { roles, type RoleDoc } from '../../core/model/roles.ts';
import { users } from '../../core/model/users.ts';
import { PERMISSION_FLAGS, permissionMask, type Permission } from '../../core/roles/permissions.ts';
import { ensureBuiltInRoles } from '../../core/roles/roles.ts';
import { createCustomRole, deleteCustomRole, permissionNames, updateCustomRole } from '../../core/moderation/roles.ts';
import { validationFailed } from '../../core/errors.ts';

const PERMISSIONS = Object.keys(PERMISSION_FLAGS) as Permission[];

const rolePages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function rolesPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    await ensureBuiltInRoles(core);
    const list = await collection(core.db, roles).find({}).sort({ position: -1 }).toArray();
    const counts = await Promise.all(list.map((r) => collection(core.db, users).countDocuments({ roleId: r._id })));
    return view(
      reply,
      me,
      'roles',
      'admin.roles.title',
      {
        roles: list.map((r, i) => ({
          ...r,
          id: String(r._id),
          users: counts[i],
          names: permissionNames(r.permissions),
        })),
        permissions: PERMISSIONS,
        error,
      },
      error ? 422 : 200,
    );
  }

  async function roleOf(request: FastifyRequest): Promise<RoleDoc | null> {
    const id = idParam(request);
    return id === null ? null : collection(core.db, roles).findOne({ _id: id });
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

  app.get('/admin/roles', async (request, reply) => {
    const me = await staff(request, reply, 'manage_roles');
    if (!me) return reply;
    return rolesPage(reply, me);
  });

  app.post('/admin/roles', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_roles');
    if (!me) return reply;
    const error = await attempt(() =>
      createCustomRole(core, { name: field(request, 'name', 200), ...formInput(request) }, me.role, me.account._id),
    );
    if (error) return rolesPage(reply, me, error);
    return reply.redirect('/admin/roles', 303);
  });

  app.get<{ Params: { id: string } }>('/admin/roles/:id/edit', async (request, reply) => {
    const me = await staff(request, reply, 'manage_roles');
    if (!me) return reply;
    const role = await roleOf(request);
    if (!role) return reply.callNotFound();
    return view(reply, me, 'role_edit', 'admin.roles.edit', {
      role: { ...role, id: String(role._id), names: permissionNames(role.permissions) },
      permissions: PERMISSIONS,
      error: null,
    });
  });

  app.post<{ Params: { id: string } }>(
    '/admin/roles/:id',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_roles');
      if (!me) return reply;
      const role = await roleOf(request);
      if (!role) return reply.callNotFound();
      const error = await attempt(() => updateCustomRole(core, role, formInput(request), me.role, me.account._id));
      if (error) return rolesPage(reply, me, error);
      return reply.redirect('/admin/roles', 303);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/roles/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_roles');
      if (!me) return reply;
      const role = await roleOf(request);
      if (!role) return reply.callNotFound();
      const error = await attempt(() => deleteCustomRole(core, role, me.role, me.account._id));
      if (error) return rolesPage(reply, me, error);
      return reply.redirect('/admin/roles', 303);
    },
  );
};

export default rolePages;
