// The admin permission matrix: every admin route of the running API (read from Fastify's route
// table) × every kind of caller → the status Mastodon answers. The expected permission of each
// route is written down here, apart from the code: a new admin route that is not in this table
// fails the test, and so does a route whose guard differs from the table.
import type { RouteOptions } from 'fastify';
import diagnostics from 'node:diagnostics_channel';
import type { Permission } from '../../../services/core/roles/permissions.ts';
import { BUILT_IN_ROLES, hasPermission } from '../../../services/core/roles/permissions.ts';
import { createTestApp, createTestUser } from '../../support/fixtures.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';

jest.setTimeout(180_000);

/** Mastodon's policy for each admin route: the permission its caller's role needs. */
const EXPECTED: Record<string, Permission> = {
  'GET /api/v1/admin/accounts': 'manage_users',
  'GET /api/v2/admin/accounts': 'manage_users',
  'GET /api/v1/admin/accounts/:id': 'manage_users',
  'POST /api/v1/admin/accounts/:id/approve': 'manage_users',
  'POST /api/v1/admin/accounts/:id/reject': 'manage_users',
  'DELETE /api/v1/admin/accounts/:id': 'delete_user_data',
  'POST /api/v1/admin/accounts/:id/action': 'manage_users',
  'POST /api/v1/admin/accounts/:id/enable': 'manage_users',
  'POST /api/v1/admin/accounts/:id/unsilence': 'manage_users',
  'POST /api/v1/admin/accounts/:id/unsuspend': 'manage_users',
  'POST /api/v1/admin/accounts/:id/unsensitive': 'manage_users',
  'POST /api/v1/admin/accounts/:id/disable_2fa': 'manage_user_access',
  'GET /api/v1/admin/reports': 'manage_reports',
  'GET /api/v1/admin/reports/:id': 'manage_reports',
  'PUT /api/v1/admin/reports/:id': 'manage_reports',
  'POST /api/v1/admin/reports/:id/assign_to_self': 'manage_reports',
  'POST /api/v1/admin/reports/:id/unassign': 'manage_reports',
  'POST /api/v1/admin/reports/:id/resolve': 'manage_reports',
  'POST /api/v1/admin/reports/:id/reopen': 'manage_reports',
  'GET /api/v1/admin/domain_blocks': 'manage_federation',
  'GET /api/v1/admin/domain_blocks/:id': 'manage_federation',
  'POST /api/v1/admin/domain_blocks': 'manage_federation',
  'PUT /api/v1/admin/domain_blocks/:id': 'manage_federation',
  'DELETE /api/v1/admin/domain_blocks/:id': 'manage_federation',
  'GET /api/v1/admin/domain_allows': 'manage_federation',
  'GET /api/v1/admin/domain_allows/:id': 'manage_federation',
  'POST /api/v1/admin/domain_allows': 'manage_federation',
  'DELETE /api/v1/admin/domain_allows/:id': 'manage_federation',
  'GET /api/v1/admin/email_domain_blocks': 'manage_blocks',
  'GET /api/v1/admin/email_domain_blocks/:id': 'manage_blocks',
  'POST /api/v1/admin/email_domain_blocks': 'manage_blocks',
  'DELETE /api/v1/admin/email_domain_blocks/:id': 'manage_blocks',
  'GET /api/v1/admin/canonical_email_blocks': 'manage_blocks',
  'GET /api/v1/admin/canonical_email_blocks/:id': 'manage_blocks',
  'POST /api/v1/admin/canonical_email_blocks/test': 'manage_blocks',
  'POST /api/v1/admin/canonical_email_blocks': 'manage_blocks',
  'DELETE /api/v1/admin/canonical_email_blocks/:id': 'manage_blocks',
  'GET /api/v1/admin/ip_blocks': 'manage_blocks',
  'GET /api/v1/admin/ip_blocks/:id': 'manage_blocks',
  'POST /api/v1/admin/ip_blocks': 'manage_blocks',
  'PUT /api/v1/admin/ip_blocks/:id': 'manage_blocks',
  'DELETE /api/v1/admin/ip_blocks/:id': 'manage_blocks',
  'POST /api/v1/admin/measures': 'view_dashboard',
  'POST /api/v1/admin/dimensions': 'view_dashboard',
  'POST /api/v1/admin/retention': 'view_dashboard',
  // Announcements (the announcements area; Mastodon has them in its web admin only).
  'GET /api/v1/admin/announcements': 'manage_announcements',
  'GET /api/v1/admin/announcements/:id': 'manage_announcements',
  'POST /api/v1/admin/announcements': 'manage_announcements',
  'PUT /api/v1/admin/announcements/:id': 'manage_announcements',
  'POST /api/v1/admin/announcements/:id/publish': 'manage_announcements',
  'POST /api/v1/admin/announcements/:id/unpublish': 'manage_announcements',
  'DELETE /api/v1/admin/announcements/:id': 'manage_announcements',
  // Trends review (the trends area): reviewing needs the taxonomies permission.
  'GET /api/v1/admin/trends/tags': 'manage_taxonomies',
  'POST /api/v1/admin/trends/tags/:id/approve': 'manage_taxonomies',
  'POST /api/v1/admin/trends/tags/:id/reject': 'manage_taxonomies',
  'GET /api/v1/admin/trends/statuses': 'manage_taxonomies',
  'POST /api/v1/admin/trends/statuses/:id/approve': 'manage_taxonomies',
  'POST /api/v1/admin/trends/statuses/:id/reject': 'manage_taxonomies',
  'GET /api/v1/admin/trends/links': 'manage_taxonomies',
  'POST /api/v1/admin/trends/links/:id/approve': 'manage_taxonomies',
  'POST /api/v1/admin/trends/links/:id/reject': 'manage_taxonomies',
  'GET /api/v1/admin/trends/links/publishers': 'manage_taxonomies',
  'POST /api/v1/admin/trends/links/publishers/:id/approve': 'manage_taxonomies',
  'POST /api/v1/admin/trends/links/publishers/:id/reject': 'manage_taxonomies',
};

type Caller = 'Owner' | 'Admin' | 'Moderator' | 'user' | 'no token' | 'app token' | 'Owner without admin scope';
const CALLERS: Caller[] = ['Owner', 'Admin', 'Moderator', 'user', 'no token', 'app token', 'Owner without admin scope'];
const ADMIN_SCOPES = ['read', 'write', 'admin:read', 'admin:write'];

function roleMask(name: string): number {
  return BUILT_IN_ROLES.find((r) => r.name === name)?.permissions ?? 0;
}

/** What the caller must get when the route needs `permission`: a status, or `passes` (past the guard). */
function expected(caller: Caller, permission: Permission): number | 'passes' {
  switch (caller) {
    case 'no token':
      return 401;
    case 'app token':
      return 403; // Mastodon's policy: no user, no role (not the 422 of require_user!)
    case 'Owner without admin scope':
      return 403;
    case 'user':
      return 403;
    default:
      return hasPermission(roleMask(caller), permission) ? 'passes' : 403;
  }
}

describe('admin permission matrix', () => {
  let api: TestApi;
  const routes: { method: string; url: string }[] = [];
  const tokens: Partial<Record<Caller, string | null>> = {};

  beforeAll(async () => {
    const onInit = (message: unknown) => {
      const { fastify } = message as { fastify: { addHook: (n: string, f: (r: RouteOptions) => void) => void } };
      fastify.addHook('onRoute', (r: RouteOptions) => {
        for (const method of [r.method].flat()) {
          if (method === 'HEAD' || method === 'OPTIONS') continue;
          if (/^\/api\/v\d+\/admin\//.test(r.url)) routes.push({ method, url: r.url });
        }
      });
    };
    diagnostics.subscribe('fastify.initialization', onInit);
    try {
      api = await startTestApi();
    } finally {
      diagnostics.unsubscribe('fastify.initialization', onInit);
    }
    const { core } = api;
    tokens.Owner = (await createTestUser(core, { role: 'Owner', scopes: ADMIN_SCOPES })).token;
    tokens.Admin = (await createTestUser(core, { role: 'Admin', scopes: ADMIN_SCOPES })).token;
    tokens.Moderator = (await createTestUser(core, { role: 'Moderator', scopes: ADMIN_SCOPES })).token;
    tokens.user = (await createTestUser(core, { scopes: ADMIN_SCOPES })).token;
    tokens['no token'] = null;
    tokens['app token'] = (await createTestApp(core, { scopes: ADMIN_SCOPES })).token;
    tokens['Owner without admin scope'] = (await createTestUser(core, { role: 'Owner' })).token;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('knows every admin route of the API', () => {
    expect(routes.length).toBeGreaterThan(40);
    const missing = routes.map((r) => `${r.method} ${r.url}`).filter((k) => !(k in EXPECTED));
    expect(missing).toEqual([]);
  });

  it('answers every caller of every admin route as Mastodon does', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const permission = EXPECTED[`${route.method} ${route.url}`];
      // An id nobody has: callers past the guard get 404 (or a validation answer), never 401/403.
      const path = route.url.replace(/:\w+/g, '999999999');
      for (const caller of CALLERS) {
        const want = expected(caller, permission);
        const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
        const res = await api.call(route.method, path, tokens[caller] ?? null, body);
        const ok =
          want === 'passes'
            ? ![401, 403].includes(res.status) &&
              res.status < 500 &&
              !(res.status === 422 && /authenticated user/.test(res.body?.error))
            : res.status === want &&
              typeof res.body?.error === 'string' &&
              (caller !== 'app token' || res.body.error === 'This action is not allowed');
        if (!ok)
          failures.push(
            `${route.method} ${route.url} as ${caller}: got ${res.status} ${JSON.stringify(res.body)?.slice(0, 120)}, want ${want}`,
          );
      }
    }
    expect(failures).toEqual([]);
  });
});
