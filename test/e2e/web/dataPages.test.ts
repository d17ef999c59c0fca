// The data and settings pages in a real browser (Chromium through playwright-core) against a real
// server, with the scheduler's import and deletion jobs running: the export page and its CSV files
// byte for byte as Mastodon writes them; those files imported into a second account (merge and
// overwrite, progress on the page) and bad files refused with Mastodon's messages; keyword filters;
// aliases and a move between two local accounts; deleting one's own account. Every page is checked
// with axe-core (no serious or critical violation).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium, newBrowserPage, signIn, submitForm } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { client, type JsonClient, type JsonResponse } from '../../support/http.ts';
import { eventually } from '../../support/eventually.ts';
import { JOBS, runScheduler, type Scheduler } from '../../../pipelines/scheduler/index.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { listFilters } from '../../../services/core/filters/filters.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { png } from '../../support/mediaFiles.ts';
import { readZip } from '../../support/zipReader.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

jest.setTimeout(300_000);

describeWithBrowser('dataPages.test.ts')('data and settings pages in a real browser (Chromium)', () => {
  let core: Core;
  let published: OutboxEvent[];
  let server: TestServer;
  let scheduler: Scheduler;
  let browser: Browser;
  let call: JsonClient;
  let domain: string;

  const newPage = () => newBrowserPage(browser);
  const submit = (page: Page, button: string) => submitForm(page, button, true);

  async function logIn(page: Page, user: TestUser): Promise<void> {
    await signIn(page, server.url, user.user.email, user.password);
    expect(new URL(page.url()).pathname).toBe('/auth/edit');
  }

  async function ok(res: Promise<JsonResponse>): Promise<JsonResponse['body']> {
    const r = await res;
    expect(r.status).toBe(200);
    return r.body;
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core, published } = await createTestCore(testConfig()));
    domain = core.config.localDomain;
    server = await startTestServer(core);
    call = client(server.url);
    scheduler = runScheduler(core, {
      intervalMs: 100,
      jobs: JOBS.filter((j) => ['bulk-imports', 'account-deletions', 'archives'].includes(j.name)),
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await scheduler?.stop();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it('export: counts and CSV files as Mastodon writes them; they import into another account', async () => {
    const ann = await createTestUser(core, { username: 'ann' });
    const bob = await createTestUser(core, { username: 'bob' });
    const carl = await createTestUser(core, { username: 'carl' });
    const dave = await createTestUser(core, { username: 'dave' });
    const frank = await createTestUser(core, { username: 'frank' });
    const eve = await createTestUser(core, { username: 'eve' });
    const id = (u: TestUser) => String(u.account._id);

    await ok(call('POST', `/api/v1/accounts/${id(bob)}/follow`, ann.token, { notify: true, languages: ['en', 'de'] }));
    await ok(call('POST', `/api/v1/accounts/${id(carl)}/follow`, ann.token, { reblogs: false }));
    await ok(call('POST', `/api/v1/accounts/${id(dave)}/mute`, ann.token, { notifications: false }));
    await ok(call('POST', `/api/v1/accounts/${id(frank)}/block`, ann.token));
    await ok(call('POST', '/api/v1/domain_blocks', ann.token, { domain: 'spam.example' }));
    const post = await ok(call('POST', '/api/v1/statuses', bob.token, { status: 'worth keeping' }));
    await ok(call('POST', `/api/v1/statuses/${post.id}/bookmark`, ann.token));
    const list = await ok(call('POST', '/api/v1/lists', ann.token, { title: 'Close, friends' }));
    await ok(call('POST', `/api/v1/lists/${list.id}/accounts`, ann.token, { account_ids: [id(bob)] }));

    const { context, page } = await newPage();
    await logIn(page, ann);
    await page.goto(`${server.url}/settings/export`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Data export');
    const rows = await page
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent]),
      );
    expect(rows).toEqual(
      expect.arrayContaining([
        ['You follow', '2'],
        ['Lists', '1'],
        ['You block', '1'],
        ['You mute', '1'],
        ['Domain blocks', '1'],
        ['Bookmarks', '1'],
      ]),
    );
    await expectAccessible(page, 'export');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-export.png'), fullPage: true });

    // The files, byte for byte as Mastodon's Export writes them (newest first where it orders).
    const expected: Record<string, [string, string]> = {
      'follows.csv': [
        'following_accounts.csv',
        'Account address,Show boosts,Notify on new posts,Languages\n' +
          `carl@${domain},false,false,\n` +
          `bob@${domain},true,true,"en, de"\n`,
      ],
      'lists.csv': ['lists.csv', `"Close, friends",bob@${domain}\n`],
      'blocks.csv': ['blocked_accounts.csv', `frank@${domain}\n`],
      'mutes.csv': ['muted_accounts.csv', `Account address,Hide notifications\ndave@${domain},false\n`],
      'domain_blocks.csv': ['blocked_domains.csv', 'spam.example\n'],
      'bookmarks.csv': ['bookmarks.csv', `${post.uri}\n`],
    };
    const files: Record<string, string> = {};
    for (const [name, [filename, body]] of Object.entries(expected)) {
      const res = await page.request.get(`${server.url}/settings/exports/${name}`);
      expect(res.status()).toBe(200);
      expect(res.headers()['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers()['content-disposition']).toBe(`attachment; filename="${filename}"`);
      files[name] = await res.text();
      expect({ name, body: files[name] }).toEqual({ name, body });
    }
    // Not signed in: no file, the log-in form.
    const anonymous = await fetch(`${server.url}/settings/exports/follows.csv`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/auth/sign_in?return_to=%2Fsettings%2Fexport');
    await context.close();

    // eve imports them; she mutes frank already, which an overwrite of her mutes removes.
    await ok(call('POST', `/api/v1/accounts/${id(frank)}/mute`, eve.token));
    const second = await newPage();
    const p = second.page;
    await logIn(p, eve);
    const importFile = async (
      type: string,
      name: string,
      body: string,
      mode: 'Merge' | 'Overwrite' = 'Merge',
    ): Promise<void> => {
      await p.goto(`${server.url}/settings/imports`);
      await p.getByLabel('Import type').selectOption(type);
      await p.getByLabel('Data', { exact: true }).setInputFiles({
        name,
        mimeType: 'text/csv',
        buffer: Buffer.from(body),
      });
      await p.getByRole('radio', { name: new RegExp(`^${mode}:`) }).check();
      await submit(p, 'Upload');
    };
    const confirmAndWait = async (): Promise<void> => {
      await submit(p, 'Confirm');
      await expect(p.getByRole('status').textContent()).resolves.toContain('Your import was scheduled');
      await eventually(
        async () => {
          await p.reload();
          return (await p.locator('tbody tr').first().textContent())?.includes('Finished');
        },
        60_000,
        'import finished',
      );
    };

    await importFile('following', 'following_accounts.csv', files['follows.csv']);
    await expect(p.locator('h1').textContent()).resolves.toBe('Confirm import');
    await expect(p.locator('main').textContent()).resolves.toContain(
      'You are about to import up to 2 items (Following list) from following_accounts.csv.',
    );
    await expectAccessible(p, 'import confirmation');
    await confirmAndWait();
    await expect(p.locator('tbody tr').first().textContent()).resolves.toContain('2 of 2 processed, 2 imported');
    await expectAccessible(p, 'imports with progress');
    await p.screenshot({ path: join(SCREENSHOTS, 'web-imports.png'), fullPage: true });
    const rel = await ok(call('GET', `/api/v1/accounts/relationships?id[]=${id(bob)}&id[]=${id(carl)}`, eve.token));
    expect(rel).toEqual([
      expect.objectContaining({
        id: id(bob),
        following: true,
        notifying: true,
        showing_reblogs: true,
        languages: ['en', 'de'],
      }),
      expect.objectContaining({ id: id(carl), following: true, notifying: false, showing_reblogs: false }),
    ]);

    await importFile('muting', 'muted_accounts.csv', files['mutes.csv'], 'Overwrite');
    await expect(p.locator('main').textContent()).resolves.toContain(
      'You are about to replace your Muting list with up to 1 items from muted_accounts.csv.',
    );
    await confirmAndWait();
    await importFile('blocking', 'blocked_accounts.csv', files['blocks.csv']);
    await confirmAndWait();
    await importFile('domain_blocking', 'blocked_domains.csv', files['domain_blocks.csv']);
    await confirmAndWait();
    await importFile('bookmarks', 'bookmarks.csv', files['bookmarks.csv']);
    await confirmAndWait();
    await importFile('lists', 'lists.csv', files['lists.csv']);
    await confirmAndWait();

    const mutes = await ok(call('GET', '/api/v1/mutes', eve.token));
    expect(mutes.map((a: { acct: string }) => a.acct)).toEqual(['dave']);
    const muteRel = await ok(call('GET', `/api/v1/accounts/relationships?id[]=${id(dave)}`, eve.token));
    expect(muteRel[0]).toMatchObject({ muting: true, muting_notifications: false });
    const blocked = await ok(call('GET', '/api/v1/blocks', eve.token));
    expect(blocked.map((a: { acct: string }) => a.acct)).toEqual(['frank']);
    await expect(ok(call('GET', '/api/v1/domain_blocks', eve.token))).resolves.toEqual(['spam.example']);
    const marks = await ok(call('GET', '/api/v1/bookmarks', eve.token));
    expect(marks.map((s: { id: string }) => s.id)).toEqual([post.id]);
    const eveLists = await ok(call('GET', '/api/v1/lists', eve.token));
    expect(eveLists.map((l: { title: string }) => l.title)).toEqual(['Close, friends']);
    const members = await ok(call('GET', `/api/v1/lists/${eveLists[0].id}/accounts`, eve.token));
    expect(members.map((a: { acct: string }) => a.acct)).toEqual(['bob']);

    // A file exported by Mastodon itself (no header for blocks, a handle with a leading @).
    await importFile('blocking', 'blocked_accounts.csv', `@carl@${domain}\r\n\r\n`);
    await confirmAndWait();
    const blockedAfter = await ok(call('GET', '/api/v1/blocks', eve.token));
    expect(blockedAfter.map((a: { acct: string }) => a.acct).sort()).toEqual(['carl', 'frank']);

    // An upload cancelled instead of confirmed: gone, nothing imported.
    await importFile('blocking', 'blocked_accounts.csv', `dave@${domain}\r\n`);
    await submit(p, 'Cancel');
    await expect(p.getByRole('status').textContent()).resolves.toContain('The import was cancelled.');
    const blockedStill = await ok(call('GET', '/api/v1/blocks', eve.token));
    expect(blockedStill.map((a: { acct: string }) => a.acct).sort()).toEqual(['carl', 'frank']);

    // Bad files: a clear message on the form, never a 500.
    const refused = async (type: string, name: string, body: string, message: string) => {
      await p.goto(`${server.url}/settings/imports`);
      await p.getByLabel('Import type').selectOption(type);
      await p
        .getByLabel('Data', { exact: true })
        .setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(body) });
      const [res] = await Promise.all([
        p.waitForResponse((r) => r.url().endsWith('/settings/imports') && r.request().method() === 'POST'),
        submit(p, 'Upload'),
      ]);
      expect(res.status()).toBe(422);
      await expect(p.getByRole('alert').textContent()).resolves.toBe(message);
      await expect(p.getByLabel('Import type').inputValue()).resolves.toBe(type);
    };
    await refused('lists', 'lists.csv', 'Friends,x"y\n', 'Invalid CSV file. Error: Illegal quoting in line 1.');
    await refused(
      'following',
      'f.csv',
      '"bob@example.test\n',
      'Invalid CSV file. Error: Unclosed quoted field in line 2.',
    );
    await refused('following', 'f.csv', '\n\n', 'Empty CSV file');
    await refused('domain_blocking', 'x.csv', files['follows.csv'], 'Incompatible with the selected import type');
    await refused(
      'blocking',
      'big.csv',
      Array.from({ length: 20_001 }, (_, i) => `u${i}@example.test`).join('\n'),
      'contains more than 20000 rows',
    );
    await expectAccessible(p, 'imports with an error');
    await second.context.close();
  });

  it('filters: add, change keywords, refuse a filter without context, delete', async () => {
    const gail = await createTestUser(core, { username: 'gail' });
    const { context, page } = await newPage();
    await logIn(page, gail);
    await page.goto(`${server.url}/filters`);
    await expect(page.locator('main').textContent()).resolves.toContain('You have no filters.');
    await expectAccessible(page, 'filters (empty)');
    await Promise.all([page.waitForURL('**/filters/new'), page.getByRole('link', { name: 'Add new filter' }).click()]);
    await expectAccessible(page, 'new filter');

    // No context: Mastodon's message, the form keeps what was typed.
    await page.getByLabel('Title').fill('Spoilers');
    await page.getByLabel('Keyword 1', { exact: true }).fill('finale');
    await submit(page, 'Save new filter');
    await expect(page.getByRole('alert').textContent()).resolves.toBe("Context can't be blank");
    await expect(page.getByLabel('Keyword 1', { exact: true }).inputValue()).resolves.toBe('finale');

    await page.getByLabel('Home and lists').check();
    await page.getByLabel('Conversations').check();
    await page.getByLabel('Hide completely').check();
    await page.getByLabel('Expire after').selectOption('86400');
    await page.getByLabel('Keyword 2', { exact: true }).fill('season 3');
    await page.getByLabel('Whole word (keyword 2)').uncheck();
    await submit(page, 'Save new filter');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Filter successfully added');
    await expect(page.locator('main').textContent()).resolves.toContain('Keywords: finale, season 3');
    await expectAccessible(page, 'filters');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-filters.png'), fullPage: true });
    let [saved] = await listFilters(core, gail.account._id);
    expect(saved.filter).toMatchObject({ title: 'Spoilers', context: ['home', 'thread'], action: 'hide' });
    expect(saved.filter.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_000_000);
    expect(saved.keywords.map((k) => [k.keyword, k.wholeWord])).toEqual([
      ['finale', true],
      ['season 3', false],
    ]);

    // The API sees the same filter.
    const api = await ok(call('GET', '/api/v2/filters', gail.token));
    expect(api).toEqual([expect.objectContaining({ title: 'Spoilers', filter_action: 'hide' })]);

    await Promise.all([page.waitForURL('**/edit'), page.getByRole('link', { name: 'Edit: Spoilers' }).click()]);
    await expectAccessible(page, 'edit filter');
    await page.getByLabel('Remove keyword 1').check();
    await page.getByLabel('Keyword 3', { exact: true }).fill('ending');
    await page.getByLabel('Title').fill('No spoilers');
    await submit(page, 'Save changes');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Filter successfully updated');
    [saved] = await listFilters(core, gail.account._id);
    expect(saved.filter.title).toBe('No spoilers');
    // The expiry was kept.
    expect(saved.filter.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_000_000);
    expect(saved.keywords.map((k) => k.keyword)).toEqual(['season 3', 'ending']);

    // Another user's filter is not found.
    const other = await createTestUser(core);
    const theirs = await ok(
      call('POST', '/api/v2/filters', other.token, {
        title: 'theirs',
        context: ['home'],
        keywords_attributes: [{ keyword: 'x' }],
      }),
    );
    const res = await page.goto(`${server.url}/filters/${theirs.id}/edit`);
    expect(res?.status()).toBe(404);

    await page.goto(`${server.url}/filters`);
    await submit(page, 'Delete filter No spoilers');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Filter successfully deleted');
    await expect(listFilters(core, gail.account._id)).resolves.toEqual([]);
    await context.close();
  });

  it('aliases and a move between two accounts; the move is refused without alias, password or after a move', async () => {
    const george = await createTestUser(core, { username: 'george' });
    const henry = await createTestUser(core, { username: 'henry' });
    const ivy = await createTestUser(core, { username: 'ivy' });
    await ok(call('POST', `/api/v1/accounts/${george.account._id}/follow`, ivy.token, { reblogs: false }));
    const lee = await createTestUser(core, { username: 'lee' });
    await ok(call('POST', `/api/v1/accounts/${george.account._id}/block`, lee.token));

    // henry names george as his former account.
    const h = await newPage();
    await logIn(h.page, henry);
    await h.page.goto(`${server.url}/settings/aliases`);
    await expectAccessible(h.page, 'aliases');
    await h.page.getByLabel('Handle of the old account').fill(`nobody@${domain}`);
    await submit(h.page, 'Create alias');
    await expect(h.page.locator('.field-error').textContent()).resolves.toBe('The account could not be found');
    await expectAccessible(h.page, 'aliases with an error');
    await h.page.getByLabel('Handle of the old account').fill('henry');
    await submit(h.page, 'Create alias');
    await expect(h.page.locator('.field-error').textContent()).resolves.toBe('This is the current account');

    // george tries first: henry does not name him yet.
    const g = await newPage();
    await logIn(g.page, george);
    await g.page.goto(`${server.url}/settings/migration`);
    await expectAccessible(g.page, 'migration');
    await g.page.screenshot({ path: join(SCREENSHOTS, 'web-migration.png'), fullPage: true });
    await g.page.getByLabel('Handle of the new account').fill(`henry@${domain}`);
    await g.page.getByLabel('Current password').fill(george.password);
    await submit(g.page, 'Move followers');
    await expect(g.page.locator('.field-error').textContent()).resolves.toContain('is not an alias of this account');

    await h.page.getByLabel('Handle of the old account').fill(`@george@${domain}`);
    await submit(h.page, 'Create alias');
    await expect(h.page.getByRole('status').textContent()).resolves.toContain('Successfully created a new alias');
    await expect(h.page.locator('main').textContent()).resolves.toContain(`george@${domain}`);
    const henryActor = (await (
      await fetch(`${server.url}/users/henry`, { headers: { accept: 'application/activity+json' } })
    ).json()) as { alsoKnownAs?: string[] };
    expect(henryActor.alsoKnownAs).toEqual([george.account.uri]);

    await g.page.getByLabel('Current password').fill('wrong password');
    await submit(g.page, 'Move followers');
    await expect(g.page.locator('.field-error').textContent()).resolves.toBe('The password is incorrect');
    await g.page.getByLabel('Current password').fill(george.password);
    await submit(g.page, 'Move followers');
    await expect(g.page.getByRole('status').textContent()).resolves.toBe(
      `Your account is now redirecting to henry@${domain} and your followers are being moved over.`,
    );
    await expect(g.page.locator('main').textContent()).resolves.toContain('This function will become available again');
    await expectAccessible(g.page, 'migration after a move');

    // The old account redirects; ivy follows henry now, with her options, and no longer george.
    const georgeApi = await ok(call('GET', `/api/v1/accounts/${george.account._id}`, ivy.token));
    expect(georgeApi.moved).toMatchObject({ id: String(henry.account._id) });
    const georgeActor = (await (
      await fetch(`${server.url}/users/george`, { headers: { accept: 'application/activity+json' } })
    ).json()) as { movedTo?: string };
    expect(georgeActor.movedTo).toBe(henry.account.uri);
    const rel = await ok(
      call('GET', `/api/v1/accounts/relationships?id[]=${henry.account._id}&id[]=${george.account._id}`, ivy.token),
    );
    expect(rel[0]).toMatchObject({ following: true, showing_reblogs: false });
    expect(rel[1]).toMatchObject({ following: false });
    // Who blocked the old account blocks the new one too.
    const leeRel = await ok(call('GET', `/api/v1/accounts/relationships?id[]=${henry.account._id}`, lee.token));
    expect(leeRel[0]).toMatchObject({ blocking: true });

    // henry removes the alias again.
    await h.page.goto(`${server.url}/settings/aliases`);
    await submit(h.page, `Unlink alias george@${domain}`);
    await expect(h.page.getByRole('status').textContent()).resolves.toContain('Successfully removed the alias');
    await expect(h.page.locator('main').textContent()).resolves.toContain('You have no aliases.');
    await h.context.close();
    await g.context.close();
  });

  it('deleting one’s own account: password required, then suspended, signed out, data removed, username kept', async () => {
    const jack = await createTestUser(core, { username: 'jack' });
    await ok(call('POST', '/api/v1/statuses', jack.token, { status: 'soon gone' }));
    const { context, page } = await newPage();
    await logIn(page, jack);
    await page.goto(`${server.url}/settings/migration`);
    await Promise.all([
      page.waitForURL('**/settings/delete'),
      page.getByRole('link', { name: 'Delete this account' }).click(),
    ]);
    await expectAccessible(page, 'delete');
    // Without the form's CSRF token nothing happens.
    const forged = await page.request.post(`${server.url}/settings/delete`, { form: { password: jack.password } });
    expect(forged.status()).toBe(403);
    await page.getByLabel('Enter your current password').fill('not my password');
    await submit(page, 'Delete account');
    await expect(page.getByRole('alert').textContent()).resolves.toBe('The information you entered was not correct');
    expect(await call('GET', '/api/v1/accounts/verify_credentials', jack.token)).toMatchObject({ status: 200 });

    await page.getByLabel('Enter your current password').fill(jack.password);
    await submit(page, 'Delete account');
    await expect(page.locator('main').textContent()).resolves.toContain('Your account was successfully deleted');
    await expectAccessible(page, 'deleted');
    // Signed out, the token dead, the account gone from the API.
    await page.goto(`${server.url}/settings/delete`);
    expect(new URL(page.url()).pathname).toBe('/auth/sign_in');
    expect((await call('GET', '/api/v1/accounts/verify_credentials', jack.token)).status).toBe(401);
    // (Mastodon shows a suspended account as such, without its profile.)
    const gone = await call('GET', `/api/v1/accounts/${jack.account._id}`);
    expect(gone.body).toMatchObject({ suspended: true, note: '' });

    // The scheduler removes the data and the login; the account record keeps the name taken.
    await eventually(
      async () => (await collection(core.db, users).countDocuments({ _id: jack.user._id })) === 0,
      30_000,
      'login removed',
    );
    const record = await collection(core.db, accounts).findOne({ _id: jack.account._id });
    expect(record).toMatchObject({ usernameLower: 'jack', statusesCount: 0 });
    expect(record?.suspendedAt).toBeInstanceOf(Date);
    expect(record?.dataDeletedAt).toBeInstanceOf(Date);
    await context.close();
  });
  it('archive: requested once a week, built in the background, mailed, downloaded as a zip of ActivityPub JSON and media', async () => {
    const kim = await createTestUser(core, { username: 'kim' });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await png(40, 30))], { type: 'image/png' }), 'dot.png');
    form.append('description', 'a dot');
    const upload = await fetch(`${server.url}/api/v2/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${kim.token}` },
      body: form,
    });
    expect(upload.status).toBe(200);
    const media = (await upload.json()) as { id: string };
    const post = await ok(
      call('POST', '/api/v1/statuses', kim.token, { status: 'with a picture', media_ids: [media.id] }),
    );
    await ok(call('POST', `/api/v1/statuses/${post.id}/favourite`, kim.token));

    const { context, page } = await newPage();
    await logIn(page, kim);
    await page.goto(`${server.url}/settings/export`);
    await submit(page, 'Request your archive');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your archive is being prepared');
    // Once in 7 days: no button now, and a forged request is refused.
    expect(await page.getByRole('button', { name: 'Request your archive' }).count()).toBe(0);
    await expect(page.locator('main').textContent()).resolves.toContain('You can request a new archive on');
    const again = await page.request.post(`${server.url}/settings/export`, {
      form: { _csrf: await page.locator('input[name=_csrf]').first().inputValue() },
    });
    expect(again.status()).toBe(429);

    const link = await eventually(
      async () => {
        await page.reload();
        const a = page.getByRole('link', { name: /Download your archive of/ });
        return (await a.count()) > 0 ? a.getAttribute('href') : false;
      },
      30_000,
      'archive ready',
    );
    await expectAccessible(page, 'export with an archive');
    const mail = published.find(
      (e) => e.type === 'MailRequested' && (e.payload as { template: string }).template === 'backup_ready',
    );
    expect(mail?.payload).toMatchObject({
      to: kim.user.email,
      subject: expect.stringContaining('Your archive is ready'),
    });

    const res = await page.request.get(`${server.url}${link}`);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toBe('application/zip');
    const files = readZip(await res.body());
    const names = [...files.keys()];
    expect(names).toEqual(expect.arrayContaining(['actor.json', 'outbox.json', 'likes.json', 'bookmarks.json']));
    const actor = JSON.parse(files.get('actor.json')!.toString());
    expect(actor).toMatchObject({ type: 'Person', id: kim.account.uri, preferredUsername: 'kim' });
    const outbox = JSON.parse(files.get('outbox.json')!.toString());
    expect(outbox).toMatchObject({ type: 'OrderedCollection', totalItems: 1 });
    expect(outbox.orderedItems[0]).toMatchObject({
      type: 'Create',
      object: { id: post.uri, type: 'Note', attachment: [expect.objectContaining({ name: 'a dot' })] },
    });
    expect(JSON.parse(files.get('likes.json')!.toString()).orderedItems).toEqual([post.uri]);
    const mediaFiles = names.filter((n) => n.startsWith('media_attachments/'));
    expect(mediaFiles).toHaveLength(1);
    expect(files.get(mediaFiles[0])!.subarray(1, 4).toString()).toBe('PNG');

    // Another user's archive is not theirs to download.
    const other = await createTestUser(core);
    const { context: otherContext, page: otherPage } = await newPage();
    await logIn(otherPage, other);
    const stolen = await otherPage.request.get(`${server.url}${link}`);
    expect(stolen.status()).toBe(404);
    await otherContext.close();
    await context.close();
  });
});
