// The rest of the moderation dashboard in Chromium, each change checked in the database or the
// API it feeds: known servers with their counts and delivery health (a breaker reset from the
// page), domain allows, e-mail domain blocks, IP rules; server settings (registrations, about,
// feed access, branding), rules, announcements, custom emojis (also imported and copied from
// another server); trends review; roles (a custom role created
// and given to a user), the two-factor reset, and the audit log that records them. axe-core finds no serious or
// critical violation on any of these pages; screenshots of the main ones go to var/screenshots.
import { mkdirSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import { signedInContext, submit } from '../../support/pages.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { createRemoteAccount } from '../../support/remoteAccounts.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { roles } from '../../../services/core/model/roles.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import { announcements } from '../../../services/core/model/announcements.ts';
import { domainAllows } from '../../../services/core/model/instanceDomainBlocks.ts';
import { emailDomainBlocks, ipBlocks } from '../../../services/core/model/signUpBlocks.ts';
import { readHostState, recordHostFailure } from '../../../services/core/activitypub/delivery/hostState.ts';
import { DEFAULT_DELIVERY_SETTINGS } from '../../../services/core/activitypub/delivery/settings.ts';
import { getRegistrationsMode } from '../../../services/core/settings/settings.ts';
import { getFeedAccess } from '../../../services/core/settings/feedAccess.ts';
import { trendKeys } from '../../../services/core/trends/counters.ts';
import { reviewsOf } from '../../../services/core/trends/review.ts';
import { listRules } from '../../../services/core/instance/rules.ts';
import { customEmojis } from '../../../services/core/model/customEmojis.ts';
import { png } from '../../support/mediaFiles.ts';
import { createRemoteEmoji } from '../../support/remoteEmojis.ts';

// Starting the server and Chromium takes long on a loaded machine: hooks and tests get 5 minutes.
jest.setTimeout(300_000);

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

describeWithBrowser('adminServerPages.test.ts')('moderation dashboard: servers, settings, roles (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;
  let admin: TestUser;
  let moderator: TestUser;
  let member: TestUser;

  const signedIn = (user: TestUser) => signedInContext(browser, server.url, user);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core } = await createTestCore(testConfig()));
    server = await startTestServer(core);
    admin = await createTestUser(core, { role: 'Admin' });
    moderator = await createTestUser(core, { role: 'Moderator' });
    member = await createTestUser(core);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it('federation: known servers with counts and delivery health, domain allows, e-mail domain blocks, IP rules', async () => {
    await createRemoteAccount(core, 'https://far.example', 'alice');
    await createRemoteAccount(core, 'https://far.example', 'bob');
    await createRemoteAccount(core, 'https://near.example', 'carol');
    for (let i = 0; i < 3; i++)
      await recordHostFailure(core.redis, DEFAULT_DELIVERY_SETTINGS, 'far.example', 'timeout', null);
    const { context, page } = await signedIn(admin);
    await page.goto(`${server.url}/admin/instances`);
    const far = page.locator('tr', { hasText: 'far.example' });
    await expect(far.locator('td').nth(1).textContent()).resolves.toBe('2');
    await expect(far.textContent()).resolves.toContain('3 failed attempts');
    await expect(page.locator('tr', { hasText: 'near.example' }).textContent()).resolves.toContain('Available');
    await expectAccessible(page, 'instances');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-instances.png'), fullPage: true });
    await submit(page, 'Mark far.example as available');
    expect((await readHostState(core.redis, 'far.example')).fails).toBe(0);
    await expect(page.locator('tr', { hasText: 'far.example' }).textContent()).resolves.toContain('Available');

    await page.goto(`${server.url}/admin/domain_allows`);
    await page.getByLabel('Domain', { exact: true }).fill('friends.example');
    await submit(page, 'Allow domain');
    await expect(page.locator('table').textContent()).resolves.toContain('friends.example');
    expect(await collection(core.db, domainAllows).findOne({ domain: 'friends.example' })).not.toBeNull();
    await expectAccessible(page, 'domain allows');

    await page.goto(`${server.url}/admin/email_domain_blocks`);
    await page.getByLabel('Domain', { exact: true }).fill('spam-mail.example');
    await page.getByLabel('Allow sign-ups with approval').check();
    await submit(page, 'Create block');
    expect(await collection(core.db, emailDomainBlocks).findOne({ domain: 'spam-mail.example' })).toMatchObject({
      allowWithApproval: true,
    });
    await page.getByLabel('Domain', { exact: true }).fill('spam-mail.example');
    await submit(page, 'Create block');
    await expect(page.locator('.error').textContent()).resolves.toContain('already been taken');
    await expectAccessible(page, 'e-mail domain blocks');

    await page.goto(`${server.url}/admin/ip_blocks`);
    await page.getByLabel('IP', { exact: true }).fill('192.0.2.0/24');
    await page.getByLabel('Rule').selectOption('sign_up_block');
    await page.getByLabel('Comment').fill('spam wave');
    await submit(page, 'Add rule');
    expect(await collection(core.db, ipBlocks).findOne({ ip: '192.0.2.0/24' })).toMatchObject({
      severity: 'sign_up_block',
      comment: 'spam wave',
    });
    await page.getByLabel('IP', { exact: true }).fill('not an address');
    await submit(page, 'Add rule');
    await expect(page.locator('.error').count()).resolves.toBe(1);
    await expectAccessible(page, 'ip blocks');
    await context.close();
  });

  it('server settings, rules and announcements', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${server.url}/admin/settings/registrations`);
    await page.getByLabel('Who can sign up').selectOption('approved');
    await page.getByLabel('Custom message when sign-ups are not available').fill('Back soon.');
    await submit(page, 'Save changes');
    expect(await getRegistrationsMode(core)).toBe('approved');
    await expectAccessible(page, 'settings: registrations');

    await page.goto(`${server.url}/admin/settings/about`);
    await page.getByLabel('Server name').fill('Pages Test Server');
    await page.getByLabel('Server description').fill('A quiet place.');
    await submit(page, 'Save changes');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-settings.png'), fullPage: true });
    const instance = (await (await fetch(`${server.url}/api/v2/instance`)).json()) as {
      title: string;
      description: string;
      registrations: { approval_required: boolean };
    };
    expect(instance).toMatchObject({
      title: 'Pages Test Server',
      description: 'A quiet place.',
      registrations: { approval_required: true },
    });
    await expectAccessible(page, 'settings: about');

    await page.goto(`${server.url}/admin/settings/discovery`);
    await page.getByLabel('Live feed of local posts').selectOption('authenticated');
    await submit(page, 'Save changes');
    expect((await getFeedAccess(core)).live.local).toBe('authenticated');
    // The API refuses logged-out readers of that feed, as Mastodon (422, an authenticated user needed).
    expect((await fetch(`${server.url}/api/v1/timelines/public?local=true`)).status).toBe(422);
    await expectAccessible(page, 'settings: discovery');

    await page.goto(`${server.url}/admin/rules`);
    await page.getByLabel('Rule', { exact: true }).fill('Be kind.');
    await submit(page, 'Add rule');
    expect((await listRules(core)).map((r) => r.text)).toEqual(['Be kind.']);
    await page.getByLabel('Rule', { exact: true }).fill('x'.repeat(301));
    await page.locator('#text').evaluate((el) => el.removeAttribute('maxlength'));
    await page.getByLabel('Rule', { exact: true }).fill('x'.repeat(301));
    await submit(page, 'Add rule');
    await expect(page.locator('.error').textContent()).resolves.toContain('too long');
    await expectAccessible(page, 'rules');

    await page.goto(`${server.url}/admin/announcements`);
    await page.getByLabel('Text').fill('Maintenance tonight');
    await submit(page, 'Create announcement');
    const published = await collection(core.db, announcements).findOne({ text: 'Maintenance tonight' });
    expect(published?.published).toBe(true);
    const seen = await fetch(`${server.url}/api/v1/announcements`, {
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(((await seen.json()) as { content: string }[]).map((a) => a.content).join()).toContain('Maintenance');
    await submit(page, 'Unpublish: Maintenance tonight');
    expect((await collection(core.db, announcements).findOne({ _id: published?._id }))?.published).toBe(false);
    await expectAccessible(page, 'announcements');
    await context.close();
  });

  it('custom emojis: uploaded, put in a category, disabled, deleted', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${server.url}/admin/custom_emojis`);
    await page.getByLabel('Shortcode').fill('blobcat');
    await page
      .getByLabel('Image')
      .setInputFiles({ name: 'blobcat.png', mimeType: 'image/png', buffer: await png(64, 64) });
    await page.getByLabel('Category', { exact: true }).fill('cats');
    await submit(page, 'Upload');
    const listed = async () =>
      (await (await fetch(`${server.url}/api/v1/custom_emojis`)).json()) as { shortcode: string; category: string }[];
    expect(await listed()).toMatchObject([{ shortcode: 'blobcat', category: 'cats' }]);
    await expectAccessible(page, 'custom emojis');
    await page.getByLabel('Category of :blobcat:').fill('felines');
    await submit(page, 'Save the category of :blobcat:');
    expect(await listed()).toMatchObject([{ shortcode: 'blobcat', category: 'felines' }]);
    await submit(page, 'Disable :blobcat:');
    expect(await listed()).toEqual([]);
    await expect(page.locator('tbody').textContent()).resolves.toContain('Disabled');
    // A second emoji with a taken shortcode is refused with the core's message.
    await page.getByLabel('Shortcode').fill('blobcat');
    await page.getByLabel('Image').setInputFiles({ name: 'b.png', mimeType: 'image/png', buffer: await png(32, 32) });
    await submit(page, 'Upload');
    await expect(page.locator('.error').textContent()).resolves.toContain('already been taken');
    await submit(page, 'Delete :blobcat:');
    expect(await collection(core.db, customEmojis).countDocuments({ domain: null })).toBe(0);
    await context.close();
  });

  it('custom emojis: an archive imported, a remote emoji copied; the server thumbnail uploaded and removed', async () => {
    const { context, page } = await signedIn(admin);
    // An archive as tootctl takes it: two PNGs and a file that is no image.
    const dir = await mkdtemp(join(tmpdir(), 'fedisrv-emoji-page-'));
    try {
      await mkdir(join(dir, 'pack'));
      await writeFile(join(dir, 'pack', 'wave.png'), await png(32, 32));
      await writeFile(join(dir, 'pack', 'nod.png'), await png(40, 40));
      await writeFile(join(dir, 'pack', 'broken.png'), 'not an image');
      await promisify(execFile)('tar', ['-czf', join(dir, 'pack.tar.gz'), '-C', dir, 'pack']);
      await page.goto(`${server.url}/admin/custom_emojis`);
      await page.getByLabel('Archive').setInputFiles(join(dir, 'pack.tar.gz'));
      await page.getByLabel('Group the imported emojis under').fill('imported');
      await submit(page, 'Import');
      await expect(page.locator('[role=status]').textContent()).resolves.toBe(
        'Imported 2, skipped 0, failed to import 1.',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const local = await collection(core.db, customEmojis).find({ domain: null }).toArray();
    expect(local.map((e) => [e.shortcode, e.category]).sort()).toEqual([
      ['nod', 'imported'],
      ['wave', 'imported'],
    ]);

    // Another server's emoji, its image already copied here by the media pipeline.
    await createRemoteEmoji(core, 'farcat', 'far.example', { cached: true });
    await page.goto(`${server.url}/admin/custom_emojis?remote=1`);
    await page.getByLabel('Server').fill('far.example');
    await submit(page, 'Filter');
    expect(page.url()).toContain('by_domain=far.example');
    await expectAccessible(page, 'remote custom emojis');
    await submit(page, 'Copy :farcat: from far.example');
    const listed = (await (await fetch(`${server.url}/api/v1/custom_emojis`)).json()) as { shortcode: string }[];
    expect(listed.map((e) => e.shortcode).sort()).toEqual(['farcat', 'nod', 'wave']);
    await collection(core.db, customEmojis).deleteMany({});

    await page.goto(`${server.url}/admin/settings/branding`);
    await page.getByLabel(/Server thumbnail/).setInputFiles({
      name: 'thumb.png',
      mimeType: 'image/png',
      buffer: await png(1200, 630),
    });
    await submit(page, 'Save changes');
    await expectAccessible(page, 'settings: branding');
    const thumbnail = async () =>
      (
        (await (await fetch(`${server.url}/api/v2/instance`)).json()) as {
          thumbnail: { url: string; blurhash?: string };
        }
      ).thumbnail;
    const uploaded = await thumbnail();
    expect(uploaded.url).toMatch(/\/site_uploads\/files\/thumbnail\//);
    expect(uploaded.blurhash).toEqual(expect.any(String));
    expect((await fetch(uploaded.url.replace(core.config.baseUrl, server.url))).status).toBe(200);
    await expect(page.getByRole('img', { name: 'Current thumbnail' }).count()).resolves.toBe(1);
    // Not an image: the page says so, the thumbnail stays.
    await page
      .getByLabel(/Server thumbnail/)
      .setInputFiles({ name: 'x.png', mimeType: 'image/png', buffer: Buffer.from('nope') });
    await submit(page, 'Save changes');
    await expect(page.locator('.error').textContent()).resolves.toContain('must be a PNG, JPEG, GIF or WebP');
    expect((await thumbnail()).url).toBe(uploaded.url);
    await page.getByLabel('Remove the thumbnail').check();
    await submit(page, 'Save changes');
    expect((await thumbnail()).url).not.toBe(uploaded.url);
    await context.close();
  });

  it('a moderator reviews a trending hashtag', async () => {
    const post = await fetch(`${server.url}/api/v1/statuses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'hello #reviewme' }),
    });
    expect(post.status).toBe(200);
    await core.redis.zadd(trendKeys.ranking('tag'), 5, 'reviewme');
    const { context, page } = await signedIn(moderator);
    await page.goto(`${server.url}/admin/trends/tags`);
    await expect(page.locator('tr', { hasText: '#reviewme' }).textContent()).resolves.toContain('Not reviewed');
    await expectAccessible(page, 'trends');
    await submit(page, 'Approve #reviewme');
    expect((await reviewsOf(core, 'tag', ['reviewme'])).get('reviewme')?.state).toBe('approved');
    await expect(page.locator('tr', { hasText: '#reviewme' }).textContent()).resolves.toContain('Approved');
    await context.close();
  });

  it('roles: a custom role is created and given; two-factor reset; both in the audit log', async () => {
    await collection(core.db, users).updateOne(
      { _id: member.user._id },
      { $set: { otpRequiredForLogin: true, otpSecret: 'JBSWY3DPEHPK3PXP' } },
    );
    const { context, page } = await signedIn(admin);
    await page.goto(`${server.url}/admin/roles`);
    await page.getByLabel('Name', { exact: true }).fill('Helper');
    await page.getByLabel('Priority').fill('5');
    await page.getByLabel('Manage reports').check();
    await submit(page, 'Add role');
    const helper = await collection(core.db, roles).findOne({ nameLower: 'helper' });
    expect(helper).toMatchObject({ position: 5, permissions: 1 << 4 });
    await expectAccessible(page, 'roles');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-roles.png'), fullPage: true });
    // An admin cannot make a role that outranks their own.
    await page.getByLabel('Name', { exact: true }).fill('Overlord');
    await page.getByLabel('Priority').fill('5000');
    await submit(page, 'Add role');
    await expect(page.locator('.error').textContent()).resolves.toContain('rank below');

    await page.goto(`${server.url}/admin/accounts/${member.account._id}`);
    await expect(page.locator('dl.fields').textContent()).resolves.toContain('Enabled');
    await page.getByLabel('Role', { exact: true }).selectOption(String(helper?._id));
    await submit(page, 'Save role');
    expect((await collection(core.db, users).findOne({ _id: member.user._id }))?.roleId).toBe(helper?._id);
    await submit(page, 'Disable two-factor authentication');
    expect((await collection(core.db, users).findOne({ _id: member.user._id }))?.otpRequiredForLogin).toBe(false);
    await expectAccessible(page, 'account');
    // The accounts list filtered by role finds them.
    await page.goto(`${server.url}/admin/accounts?role_ids=${helper?._id}`);
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    await expect(page.locator('tbody').textContent()).resolves.toContain(member.account.username);

    await page.goto(`${server.url}/admin/action_logs`);
    const log = (await page.locator('table.log').textContent()) ?? '';
    expect(log).toContain('change_role User');
    expect(log).toContain('disable_2fa_user User');
    expect(log).toContain('create UserRole');
    const entries = await collection(core.db, adminActions).countDocuments({ accountId: admin.account._id });
    expect(entries).toBeGreaterThanOrEqual(3);
    await expectAccessible(page, 'audit log');
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-audit-log.png'), fullPage: true });
    await context.close();
  });
});
