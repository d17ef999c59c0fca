// The settings pages around one's network, in a real browser (Chromium driven by playwright-core):
// the languages of the public timelines and the notification policy (/settings/preferences and
// /settings/preferences/notifications), follows and followers with "unfollow" and "remove from
// followers" (/relationships), blocked and muted accounts, blocked domains, followed and featured
// hashtags; the e-mail notification choices. Each change is checked where it matters (the API, the
// database); every page passes axe-core.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import { newBrowserPage, signIn, submitForm } from '../../support/browser.ts';
import { eventually } from '../../support/eventually.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { follows } from '../../../services/core/model/follows.ts';
import { blocks } from '../../../services/core/model/blocks.ts';
import { mutes } from '../../../services/core/model/mutes.ts';
import { accountDomainBlocks } from '../../../services/core/model/accountDomainBlocks.ts';
import { tagFollows } from '../../../services/core/model/tagFollows.ts';
import { featuredTags } from '../../../services/core/model/featuredTags.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { blockAccount } from '../../../services/core/graph/block.ts';
import { muteAccount } from '../../../services/core/graph/mute.ts';
import { followTag } from '../../../services/core/tags/tagFollows.ts';
import { findOrCreateTag } from '../../../services/core/statuses/entities.ts';
import { users } from '../../../services/core/model/users.ts';
import { notificationEmailsOf } from '../../../services/core/users/notificationEmails.ts';

const BROWSER_TEST_TIMEOUT = 240_000;

describeWithBrowser('settingsPages.test.ts')('settings pages in a real browser (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;

  const newPage = (opts: { dark?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> =>
    newBrowserPage(browser, opts);
  const submit = (page: Page, button: string) => submitForm(page, button, true);
  const logIn = (page: Page, email: string, password: string) => signIn(page, server.url, email, password);

  async function api<T>(token: string, path: string, init: RequestInit = {}): Promise<T> {
    const res = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  }

  beforeAll(async () => {
    ({ core } = await createTestCore(testConfig({ LOG_LEVEL: 'error' })));
    server = await startTestServer(core);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it(
    'preferences: public timelines in the chosen languages only; the notification policy as the API sees it',
    async () => {
      const nia = await createTestUser(core, { username: 'nia', email: 'nia@example.test' });
      const poster = await createTestUser(core, { username: 'poster' });
      for (const [language, text] of [
        ['de', 'Guten Morgen'],
        ['fr', 'Bonjour'],
      ])
        await api(poster.token, '/api/v1/statuses', {
          method: 'POST',
          body: JSON.stringify({ status: text, language, visibility: 'public' }),
        });
      const publicTexts = async () =>
        (await api<{ content: string }[]>(nia.token, '/api/v1/timelines/public?local=true')).map((s) => s.content);
      await expect(eventually(async () => (await publicTexts()).length === 2 || undefined)).resolves.toBe(true);

      const { context, page } = await newPage();
      await logIn(page, 'nia@example.test', nia.password);
      await page.goto(`${server.url}/settings/preferences`);
      await expectAccessible(page, 'preferences');
      await page.getByRole('checkbox', { name: 'German' }).check();
      await submit(page, 'Save changes');
      await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
      await expect(page.getByRole('checkbox', { name: 'German' }).isChecked()).resolves.toBe(true);
      await expect(eventually(async () => (await publicTexts()).length === 1 || undefined)).resolves.toBe(true);
      expect(await publicTexts()).toEqual([expect.stringContaining('Guten Morgen')]);

      // Unchecking every language shows all of them again.
      await page.getByRole('checkbox', { name: 'German' }).uncheck();
      await submit(page, 'Save changes');
      await expect(eventually(async () => (await publicTexts()).length === 2 || undefined)).resolves.toBe(true);

      await Promise.all([
        page.waitForURL('**/settings/preferences/notifications'),
        page.getByRole('link', { name: 'Notifications' }).click(),
      ]);
      await expectAccessible(page, 'notification policy');
      await expect(page.getByLabel('Unsolicited private mentions').inputValue()).resolves.toBe('filter');
      await page.getByLabel('People you don’t follow').selectOption('filter');
      await page.getByLabel('New accounts').selectOption('drop');
      await submit(page, 'Save changes');
      await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
      await expect(api(nia.token, '/api/v2/notifications/policy')).resolves.toMatchObject({
        for_not_following: 'filter',
        for_not_followers: 'accept',
        for_new_accounts: 'drop',
        for_private_mentions: 'filter',
        for_limited_accounts: 'filter',
      });
      // A value outside accept/filter/drop (a forged form) is refused and changes nothing.
      await page
        .getByLabel('New accounts')
        .evaluate((el) => el.insertAdjacentHTML('beforeend', '<option value="everything">everything</option>'));
      await page.getByLabel('New accounts').selectOption('everything');
      await submit(page, 'Save changes');
      await expect(page.getByRole('alert').count()).resolves.toBe(1);
      await expect(api(nia.token, '/api/v2/notifications/policy')).resolves.toMatchObject({ for_new_accounts: 'drop' });
      await context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'relationships: unfollow, remove from followers, unblock, unmute, domain blocks and followed hashtags',
    async () => {
      const ana = await createTestUser(core, { username: 'ana', email: 'ana@example.test' });
      const [bob, carl, dan, eve] = await Promise.all(
        ['bob', 'carl', 'dan', 'eve'].map((username) => createTestUser(core, { username })),
      );
      await followAccount(core, ana.account, bob.account);
      await followAccount(core, carl.account, ana.account);
      await blockAccount(core, ana.account, dan.account);
      await muteAccount(core, ana.account, eve.account);
      await followTag(core, ana.account, await findOrCreateTag(core, 'gardening'));

      const { context, page } = await newPage({ dark: true });
      await logIn(page, 'ana@example.test', ana.password);
      await Promise.all([
        page.waitForURL('**/relationships'),
        page.getByRole('link', { name: 'Follows and followers' }).click(),
      ]);
      await expectAccessible(page, 'following');
      await page.getByRole('checkbox', { name: /@bob/ }).check();
      await submit(page, 'Unfollow');
      await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
      await expect(page.getByText('You are not following anyone yet.').count()).resolves.toBe(1);
      await expect(
        collection(core.db, follows).countDocuments({ accountId: ana.account._id, targetAccountId: bob.account._id }),
      ).resolves.toBe(0);

      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Followers', exact: true }).click(),
      ]);
      await expectAccessible(page, 'followers');
      // Nothing checked: refused, nothing changes.
      await submit(page, 'Remove from followers');
      await expect(page.getByRole('alert').textContent()).resolves.toBe('Select at least one account.');
      await page.getByRole('checkbox', { name: /@carl/ }).check();
      await submit(page, 'Remove from followers');
      await expect(page.getByText('Nobody follows you yet.').count()).resolves.toBe(1);
      await expect(
        collection(core.db, follows).countDocuments({ accountId: carl.account._id, targetAccountId: ana.account._id }),
      ).resolves.toBe(0);

      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Blocked users', exact: true }).click(),
      ]);
      await expectAccessible(page, 'blocks');
      await page.getByRole('checkbox', { name: /@dan/ }).check();
      await submit(page, 'Unblock');
      await expect(collection(core.db, blocks).countDocuments({ accountId: ana.account._id })).resolves.toBe(0);

      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Muted users', exact: true }).click(),
      ]);
      await expectAccessible(page, 'mutes');
      await page.getByRole('checkbox', { name: /@eve/ }).check();
      await submit(page, 'Unmute');
      await expect(collection(core.db, mutes).countDocuments({ accountId: ana.account._id })).resolves.toBe(0);

      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Blocked domains', exact: true }).click(),
      ]);
      await page.getByLabel('Domain').fill('spam.example');
      await submit(page, 'Block domain');
      await expect(page.getByRole('status').textContent()).resolves.toBe('spam.example is blocked.');
      await expectAccessible(page, 'domain blocks');
      await expect(
        collection(core.db, accountDomainBlocks).countDocuments({ accountId: ana.account._id, domain: 'spam.example' }),
      ).resolves.toBe(1);
      // Something that is not a domain is refused with Mastodon's message, nothing stored.
      await page.getByLabel('Domain').fill('not a domain!');
      await submit(page, 'Block domain');
      await expect(page.getByRole('alert').textContent()).resolves.toContain('Domain is not a valid domain name');
      await submit(page, 'Unblock domain spam.example');
      await expect(
        collection(core.db, accountDomainBlocks).countDocuments({ accountId: ana.account._id }),
      ).resolves.toBe(0);

      await Promise.all([
        page.waitForLoadState('load'),
        page.getByRole('link', { name: 'Followed hashtags', exact: true }).click(),
      ]);
      await expectAccessible(page, 'followed hashtags');
      await submit(page, 'Unfollow #gardening');
      await expect(page.getByRole('status').textContent()).resolves.toBe('You no longer follow #gardening.');
      await expect(collection(core.db, tagFollows).countDocuments({ accountId: ana.account._id })).resolves.toBe(0);
      await context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'featured hashtags: suggested from one’s posts, added by name, refused when invalid, removed',
    async () => {
      const ida = await createTestUser(core, { username: 'ida', email: 'ida@example.test' });
      await api(ida.token, '/api/v1/statuses', {
        method: 'POST',
        body: JSON.stringify({ status: 'Out in the #garden again', visibility: 'public' }),
      });
      const { context, page } = await newPage();
      await logIn(page, 'ida@example.test', ida.password);
      await page.goto(`${server.url}/settings/profile`);
      await Promise.all([
        page.waitForURL('**/settings/featured_tags'),
        page.getByRole('link', { name: 'Featured hashtags' }).click(),
      ]);
      await expectAccessible(page, 'featured hashtags');
      await expect(page.getByText('Based on your recent posts: #garden').count()).resolves.toBe(1);
      await page.getByLabel('Hashtag').fill('garden');
      await submit(page, 'Add new');
      await expect(page.getByRole('status').textContent()).resolves.toBe('#garden is featured on your profile.');
      await expect(page.getByText('1 posts').count()).resolves.toBe(1);
      await page.getByLabel('Hashtag').fill('not a tag!');
      await submit(page, 'Add new');
      await expect(page.getByRole('alert').textContent()).resolves.toContain('Tag is invalid');
      const featured = await api<{ name: string }[]>(ida.token, '/api/v1/featured_tags');
      expect(featured.map((f) => f.name)).toEqual(['garden']);
      await expectAccessible(page, 'featured hashtags with one');
      await submit(page, 'Delete #garden');
      await expect(page.getByRole('status').textContent()).resolves.toBe('The hashtag is no longer featured.');
      await expect(collection(core.db, featuredTags).countDocuments({ accountId: ida.account._id })).resolves.toBe(0);
      await context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );

  it(
    'e-mail notification choices: on and off from the page, stored as Mastodon’s notification_emails settings',
    async () => {
      const jo = await createTestUser(core, { username: 'jo', email: 'jo@example.test' });
      const stored = async () => {
        const user = await collection(core.db, users).findOne({ _id: jo.user._id });
        return user ? { ...notificationEmailsOf(user), always: user.settings.alwaysSendEmails ?? false } : null;
      };
      const { context, page } = await newPage({ dark: true });
      await logIn(page, 'jo@example.test', jo.password);
      await page.goto(`${server.url}/settings/preferences/notifications`);
      await expectAccessible(page, 'notification e-mails');
      // Mastodon's defaults; no moderation e-mails for someone who does not moderate.
      const box = (name: string) => page.getByRole('checkbox', { name, exact: true });
      await expect(box('Someone mentioned you').isChecked()).resolves.toBe(true);
      await expect(box('Someone followed you').isChecked()).resolves.toBe(true);
      await expect(box('Someone favorited your post').isChecked()).resolves.toBe(false);
      await expect(box('New report is submitted').count()).resolves.toBe(0);

      await box('Someone favorited your post').check();
      await box('Someone mentioned you').uncheck();
      await box('Always send e-mail notifications').check();
      await submit(page, 'Save changes');
      await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
      await expect(box('Someone favorited your post').isChecked()).resolves.toBe(true);
      await expect(box('Someone mentioned you').isChecked()).resolves.toBe(false);
      await expect(stored()).resolves.toMatchObject({ favourite: true, mention: false, follow: true, always: true });

      await box('Someone favorited your post').uncheck();
      await box('Someone mentioned you').check();
      await box('Always send e-mail notifications').uncheck();
      await submit(page, 'Save changes');
      await expect(stored()).resolves.toMatchObject({ favourite: false, mention: true, follow: true, always: false });
      // The policy on the same form kept its values.
      await expect(api(jo.token, '/api/v2/notifications/policy')).resolves.toMatchObject({
        for_not_following: 'accept',
      });
      await context.close();

      // A moderator is offered the report e-mail too, and can turn it off.
      const mo = await createTestUser(core, { username: 'mo', email: 'mo@example.test', role: 'Moderator' });
      const staff = await newPage();
      await logIn(staff.page, 'mo@example.test', mo.password);
      await staff.page.goto(`${server.url}/settings/preferences/notifications`);
      const report = staff.page.getByRole('checkbox', { name: 'New report is submitted', exact: true });
      await expect(report.isChecked()).resolves.toBe(true);
      await report.uncheck();
      await submit(staff.page, 'Save changes');
      const moUser = await collection(core.db, users).findOne({ _id: mo.user._id });
      expect(moUser && notificationEmailsOf(moUser).report).toBe(false);
      await staff.context.close();
    },
    BROWSER_TEST_TIMEOUT,
  );
});
