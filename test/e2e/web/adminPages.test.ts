// The moderation dashboard in Chromium: a moderator signs in, finds a report in the queue, assigns
// it, limits the reported account with a strike (the same core action as the admin API), and the
// report is resolved; sign-ups are approved in bulk; an admin blocks a domain (and sees the
// conflict message on a second try). The permission matrix: every dashboard route redirects a
// visitor to the log-in, refuses a user without the role permission its admin API route names
// (403), and serves staff who hold it. Forms without a CSRF token are refused. axe-core finds no
// serious or critical violation on any page.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { seriousAxeViolations } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { users } from '../../../services/core/model/users.ts';
import { accountWarnings, reports } from '../../../services/core/model/reports.ts';
import { instanceDomainBlocks } from '../../../services/core/model/instanceDomainBlocks.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

describeWithBrowser('adminPages.test.ts')('moderation dashboard (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;
  let moderator: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let troll: TestUser;
  let reportId: string;

  async function signedIn(user: TestUser | null): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    if (user) {
      await page.goto(`${server.url}/auth/sign_in`);
      await page.getByLabel('E-mail address').fill(user.user.email);
      await page.getByLabel('Password', { exact: true }).fill(user.password);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Log in' }).click()]);
    }
    return { context, page };
  }

  async function submit(page: Page, button: string): Promise<void> {
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: button }).click()]);
  }

  async function expectAccessible(page: Page, name: string): Promise<void> {
    const violations = await seriousAxeViolations(page);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core } = await createTestCore(testConfig()));
    server = await startTestServer(core);
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

  it('permission matrix: visitors go to the log-in, users without the permission get 403', async () => {
    const routes: [string, 'moderator' | 'admin'][] = [
      ['/admin', 'moderator'],
      ['/admin/reports', 'moderator'],
      [`/admin/reports/${reportId}`, 'moderator'],
      ['/admin/accounts', 'moderator'],
      [`/admin/accounts/${troll.account._id}`, 'moderator'],
      ['/admin/domain_blocks', 'admin'],
    ];
    const visitor = await signedIn(null);
    const plain = await signedIn(member);
    const mod = await signedIn(moderator);
    const adm = await signedIn(admin);
    for (const [path, least] of routes) {
      const anonymous = await visitor.context.request.get(`${server.url}${path}`, { maxRedirects: 0 });
      expect({ path, status: anonymous.status() }).toEqual({ path, status: 303 });
      expect(anonymous.headers()['location']).toContain('/auth/sign_in');
      expect({ path, status: (await plain.context.request.get(`${server.url}${path}`)).status() }).toEqual({
        path,
        status: 403,
      });
      expect({ path, status: (await mod.context.request.get(`${server.url}${path}`)).status() }).toEqual({
        path,
        status: least === 'moderator' ? 200 : 403,
      });
      expect({ path, status: (await adm.context.request.get(`${server.url}${path}`)).status() }).toEqual({
        path,
        status: 200,
      });
    }
    // A form without its CSRF token is refused and changes nothing.
    const forged = await mod.context.request.post(`${server.url}/admin/reports/${reportId}/resolve`, {
      form: { nothing: '1' },
    });
    expect(forged.status()).toBe(403);
    const report = await collection(core.db, reports).findOne({ _id: BigInt(reportId) });
    expect(report?.actionTakenAt).toBeNull();
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
