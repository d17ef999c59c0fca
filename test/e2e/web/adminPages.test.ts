// The moderation dashboard in Chromium: a moderator signs in, finds a report in the queue, assigns
// it, limits the reported account with a strike (the same core action as the admin API), and the
// report is resolved; sign-ups are approved in bulk; an admin blocks a domain (and sees the
// conflict message on a second try). The permission matrix: every dashboard route (read from the
// route table) redirects a visitor to the log-in, refuses a user without the role permission its
// admin API route names (403), and serves staff who hold it. Every form without its CSRF token is
// refused. axe-core finds no serious or critical violation on any page.
import { mkdirSync } from 'node:fs';
import diagnostics from 'node:diagnostics_channel';
import type { RouteOptions } from 'fastify';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import { signedInContext, submit } from '../../support/pages.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { users } from '../../../services/core/model/users.ts';
import { accountWarnings, reports } from '../../../services/core/model/reports.ts';
import { instanceDomainBlocks } from '../../../services/core/model/instanceDomainBlocks.ts';
import { BUILT_IN_ROLES, hasPermission, type Permission } from '../../../services/core/roles/permissions.ts';
import { findRoleByName } from '../../../services/core/roles/roles.ts';

// Starting the server and Chromium takes long on a loaded machine: hooks and tests get 5 minutes.
jest.setTimeout(300_000);

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

/**
 * The role permission each dashboard page needs: the one its admin API route names (Mastodon's
 * policies), written down apart from the code.
 */
const PAGE_PERMISSIONS: Record<string, Permission> = {
  '/admin': 'view_dashboard',
  '/admin/reports': 'manage_reports',
  '/admin/reports/:id': 'manage_reports',
  '/admin/accounts': 'manage_users',
  '/admin/accounts/:id': 'manage_users',
  '/admin/instances': 'manage_federation',
  '/admin/domain_blocks': 'manage_federation',
  '/admin/domain_blocks/:id/edit': 'manage_federation',
  '/admin/domain_allows': 'manage_federation',
  '/admin/email_domain_blocks': 'manage_blocks',
  '/admin/ip_blocks': 'manage_blocks',
  '/admin/settings/:section': 'manage_settings',
  '/admin/rules': 'manage_rules',
  '/admin/announcements': 'manage_announcements',
  '/admin/custom_emojis': 'manage_custom_emojis',
  '/admin/trends/:kind': 'manage_taxonomies',
  '/admin/roles': 'manage_roles',
  '/admin/roles/:id/edit': 'manage_roles',
  '/admin/action_logs': 'view_audit_log',
};

describeWithBrowser('adminPages.test.ts')('moderation dashboard (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;
  let moderator: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let troll: TestUser;
  let reportId: string;
  const adminRoutes: { method: string; url: string }[] = [];

  const signedIn = (user: TestUser | null) => signedInContext(browser, server.url, user);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core } = await createTestCore(testConfig()));
    // The dashboard's routes, read from Fastify's route table as the server starts.
    const onInit = (message: unknown) => {
      const { fastify } = message as { fastify: { addHook: (n: string, f: (r: RouteOptions) => void) => void } };
      fastify.addHook('onRoute', (r: RouteOptions) => {
        for (const method of [r.method].flat())
          if ((method === 'GET' || method === 'POST') && /^\/admin(\/|$)/.test(r.url))
            adminRoutes.push({ method, url: r.url });
      });
    };
    diagnostics.subscribe('fastify.initialization', onInit);
    try {
      server = await startTestServer(core);
    } finally {
      diagnostics.unsubscribe('fastify.initialization', onInit);
    }
    moderator = await createTestUser(core, { role: 'Moderator' });
    admin = await createTestUser(core, { role: 'Admin' });
    member = await createTestUser(core);
    troll = await createTestUser(core);
    const post = await fetch(`${server.url}/api/v1/statuses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${troll.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'something nasty' }),
    });
    const status = (await post.json()) as { id: string };
    const res = await fetch(`${server.url}/api/v1/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: String(troll.account._id), status_ids: [status.id], comment: 'rude' }),
    });
    reportId = ((await res.json()) as { id: string }).id;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it('permission matrix: every /admin page behind the permission its API names; every form needs its CSRF token', async () => {
    // Every dashboard route (from Fastify's route table) must be in the table: a new page without a
    // written-down permission fails here.
    const gets = adminRoutes.filter((r) => r.method === 'GET').map((r) => r.url);
    expect(gets.filter((url) => !(url in PAGE_PERMISSIONS)).sort()).toEqual([]);
    expect(gets.length).toBeGreaterThanOrEqual(Object.keys(PAGE_PERMISSIONS).length);
    const block = await collection(core.db, instanceDomainBlocks).insertOne({
      _id: 999_001n,
      domain: 'matrix.example',
      severity: 'noop',
      rejectMedia: false,
      rejectReports: false,
      privateComment: null,
      publicComment: null,
      obfuscate: false,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const moderatorRole = await findRoleByName(core, 'Moderator');
    const params: Record<string, string> = {
      ':section': 'about',
      ':kind': 'tags',
      ':action': 'resolve',
      ':decision': 'approve',
      ':domain': 'matrix.example',
    };
    const idFor: Record<string, string> = {
      reports: reportId,
      accounts: String(troll.account._id),
      domain_blocks: String(block.insertedId),
      roles: String(moderatorRole?._id),
    };
    const concrete = (url: string) =>
      url.replace(/:\w+/g, (p) => (p === ':id' ? (idFor[url.split('/')[2]] ?? '999999') : (params[p] ?? p)));
    const visitor = await signedIn(null);
    const plain = await signedIn(member);
    const mod = await signedIn(moderator);
    const adm = await signedIn(admin);
    const failures: string[] = [];
    const check = (path: string, who: string, got: number, want: number) => {
      if (got !== want) failures.push(`${path} as ${who}: ${got}, want ${want}`);
    };
    for (const url of gets) {
      const path = concrete(url);
      const permission = PAGE_PERMISSIONS[url];
      const anonymous = await visitor.context.request.get(`${server.url}${path}`, { maxRedirects: 0 });
      check(path, 'visitor', anonymous.status(), 303);
      expect(anonymous.headers()['location']).toContain('/auth/sign_in');
      check(path, 'user', (await plain.context.request.get(`${server.url}${path}`)).status(), 403);
      for (const [who, ctx] of [
        ['Moderator', mod],
        ['Admin', adm],
      ] as const) {
        const mask = BUILT_IN_ROLES.find((r) => r.name === who)?.permissions ?? 0;
        const status = (await ctx.context.request.get(`${server.url}${path}`)).status();
        check(path, who, status, hasPermission(mask, permission) ? 200 : 403);
      }
    }
    // Every form refuses a post without its CSRF token (403), whoever sends it, and changes nothing.
    for (const { url } of adminRoutes.filter((r) => r.method === 'POST')) {
      const path = concrete(url);
      check(
        path,
        'Admin without CSRF token',
        (await adm.context.request.post(`${server.url}${path}`, { form: { x: '1' } })).status(),
        403,
      );
    }
    expect(failures).toEqual([]);
    const report = await collection(core.db, reports).findOne({ _id: BigInt(reportId) });
    expect(report?.actionTakenAt).toBeNull();
    await collection(core.db, instanceDomainBlocks).deleteOne({ _id: block.insertedId });
    for (const c of [visitor, plain, mod, adm]) await c.context.close();
  });

  it('a moderator handles a report: assign, limit with a strike, resolved', async () => {
    const { context, page } = await signedIn(moderator);
    await page.goto(`${server.url}/admin`);
    // The admin API's measures as server-rendered charts, for the chosen period.
    await expect(page.locator('figure.chart svg').count()).resolves.toBe(5);
    await expect(page.locator('figure.chart').first().textContent()).resolves.toContain('new users');
    await page.getByLabel('Period').selectOption('7');
    await submit(page, 'Filter');
    await expect(page.locator('figure.chart').first().locator('rect').count()).resolves.toBe(7);
    await expectAccessible(page, 'dashboard');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-dashboard.png'), fullPage: true });
    await Promise.all([page.waitForURL('**/admin/reports'), page.getByRole('link', { name: 'Reports' }).click()]);
    await expectAccessible(page, 'reports');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-reports.png'), fullPage: true });
    await Promise.all([
      page.waitForURL(`**/admin/reports/${reportId}`),
      page.getByRole('link', { name: `@${troll.account.username}` }).click(),
    ]);
    await expect(page.locator('article.status').textContent()).resolves.toContain('something nasty');
    await expectAccessible(page, 'report');
    await submit(page, 'Assign to me');
    await expect(page.locator('dl.fields').textContent()).resolves.toContain(`@${moderator.account.username}`);
    await page.getByLabel('Limit').check();
    await page.getByLabel("Custom warning (sent to the account as the strike's text)").fill('Please be civil.');
    await submit(page, 'Perform action');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-report.png'), fullPage: true });
    const target = await collection(core.db, accounts).findOne({ _id: troll.account._id });
    expect(target?.silencedAt).not.toBeNull();
    const report = await collection(core.db, reports).findOne({ _id: BigInt(reportId) });
    expect(report?.actionTakenAt).not.toBeNull();
    const strike = await collection(core.db, accountWarnings).findOne({ targetAccountId: troll.account._id });
    expect(strike).toMatchObject({ action: 'silence', text: 'Please be civil.' });
    await expect(page.locator('dl.fields').textContent()).resolves.toContain('Resolved');
    // A moderator cannot act on the admin (rank): the page says why.
    await page.goto(`${server.url}/admin/accounts/${admin.account._id}`);
    await page.getByLabel('Suspend').check();
    await submit(page, 'Perform action');
    await expect(page.locator('.error').textContent()).resolves.toContain('not allowed');
    await context.close();
  });

  it('sign-ups awaiting approval are approved in bulk', async () => {
    const a = await createTestUser(core, { approved: false });
    const b = await createTestUser(core, { approved: false });
    const { context, page } = await signedIn(moderator);
    await page.goto(`${server.url}/admin/accounts?status=pending`);
    await expectAccessible(page, 'accounts');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-accounts.png'), fullPage: true });
    await page.getByLabel(`Select @${a.account.username}`).check();
    await page.getByLabel(`Select @${b.account.username}`).check();
    await submit(page, 'Approve selected');
    const approved = await collection(core.db, users)
      .find({ _id: { $in: [a.user._id, b.user._id] } })
      .toArray();
    expect(approved.map((u) => u.approved)).toEqual([true, true]);
    await page.goto(`${server.url}/admin/accounts/${troll.account._id}`);
    await expectAccessible(page, 'account');
    await context.close();
  });

  it('an admin blocks a domain; a second block of it shows the conflict', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${server.url}/admin/domain_blocks`);
    await page.getByLabel('Domain', { exact: true }).fill('spam.example');
    await page.getByLabel('Severity').selectOption('suspend');
    await page.getByLabel('Public comment').fill('Spam');
    await submit(page, 'Create block');
    await expect(page.locator('table').textContent()).resolves.toContain('spam.example');
    expect(await collection(core.db, instanceDomainBlocks).findOne({ domain: 'spam.example' })).toMatchObject({
      severity: 'suspend',
    });
    await expectAccessible(page, 'domain blocks');
    await page.getByLabel('Domain', { exact: true }).fill('spam.example');
    await submit(page, 'Create block');
    await expect(page.locator('.error').count()).resolves.toBe(1);
    await context.close();
  });
});
