// requirePermission, the check every admin route uses: a route on the real API app, called over
// HTTP by users with different roles.
import type { Core } from '../../../services/core/context.ts';
import { buildApi, type Api } from '../../../services/api/app.ts';
import { requirePermission } from '../../../services/api/plugins/auth.ts';
import { createRole } from '../../../services/core/roles/roles.ts';
import { permissionMask } from '../../../services/core/roles/permissions.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

describe('requirePermission', () => {
  let core: Core;
  let app: Api;
  let url: string;

  beforeAll(async () => {
    ({ core } = await createTestCore());
    app = await buildApi(core);
    app.get(
      '/test/admin/users',
      { config: { auth: { scopes: ['admin:read', 'admin:read:accounts'], user: 'required' } } },
      async (request) => {
        const { account } = await requirePermission(request, 'manage_users');
        return { ok: true, by: account.username };
      },
    );
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    await createRole(core, { name: 'User manager', permissions: permissionMask(['manage_users']) });
    await createRole(core, { name: 'Tagger', permissions: permissionMask(['manage_taxonomies']) });
  });

  afterAll(async () => {
    await app?.close();
    if (core) await closeTestCore(core);
  });

  const get = (token: string) => fetch(`${url}/test/admin/users`, { headers: { authorization: `Bearer ${token}` } });
  const scopes = ['read', 'admin:read'];

  it('lets roles with the permission (or administrator) through', async () => {
    for (const role of ['Owner', 'Admin', 'Moderator', 'User manager']) {
      const { token, account } = await createTestUser(core, { role, scopes });
      const res = await get(token);
      expect({ role, status: res.status }).toEqual({ role, status: 200 });
      expect(await res.json()).toEqual({ ok: true, by: account.username });
    }
  });

  it('refuses others with 403 This action is not allowed', async () => {
    for (const role of [undefined, 'Tagger']) {
      const { token } = await createTestUser(core, { role, scopes });
      const res = await get(token);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'This action is not allowed' });
    }
  });

  it('checks the admin scope before the role', async () => {
    const { token } = await createTestUser(core, { role: 'Owner', scopes: ['read', 'write'] });
    const res = await get(token);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'This action is outside the authorized scopes' });
  });
});
