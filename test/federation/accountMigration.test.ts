// Moving an account between two instances of this server, through the pages in Chromium: the new
// account on B names the old one on A as an alias (/settings/aliases), the old account moves
// (/settings/migration). A sends the actor's Update (movedTo) and a Move to its followers' servers;
// B checks the alias and moves its local followers; A moves its own local followers, which follow
// the new account across servers.
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../support/browser.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { runTestDelivery, settles, startInstance, type Instance } from './support.ts';
import { JOBS, runScheduler, type Scheduler } from '../../pipelines/scheduler/index.ts';

jest.setTimeout(180_000);

describeWithBrowser('accountMigration.test.ts')('moving an account between two instances', () => {
  let a: Instance;
  let b: Instance;
  let browser: Browser;
  let scheduler: Scheduler;
  const deliveries: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startInstance(), startInstance()]);
    for (const instance of [a, b]) deliveries.push(await runTestDelivery(instance.core));
    scheduler = runScheduler(a.core, {
      intervalMs: 100,
      jobs: JOBS.filter((j) => j.name === 'account-deletions'),
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await scheduler?.stop();
    for (const d of deliveries) await d.stop();
    await Promise.all([a?.close(), b?.close()]);
  });

  async function signedIn(instance: Instance, user: TestUser): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${instance.url}/auth/sign_in`);
    await page.getByLabel('E-mail address').fill(user.user.email);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Log in' }).click()]);
    expect(new URL(page.url()).pathname).toBe('/auth/edit');
    return page;
  }

  async function press(page: Page, name: string): Promise<void> {
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name }).click()]);
  }

  it('alias on B, move on A: followers on both servers follow the new account', async () => {
    const alice = await createTestUser(a.core, { username: 'alice' });
    const carol = await createTestUser(a.core, { username: 'carol' });
    const newAlice = await createTestUser(b.core, { username: 'newalice' });
    const bob = await createTestUser(b.core, { username: 'bob' });

    // bob on B and carol on A follow alice.
    const aliceOnB = (await b.call('GET', `/api/v1/accounts/lookup?acct=alice@${a.domain}`, bob.token)).body.id;
    expect((await b.call('POST', `/api/v1/accounts/${aliceOnB}/follow`, bob.token)).status).toBe(200);
    expect(
      (await a.call('POST', `/api/v1/accounts/${alice.account._id}/follow`, carol.token, { notify: true })).status,
    ).toBe(200);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/accounts/${alice.account._id}/followers`, alice.token);
        expect(res.body.map((x: { acct: string }) => x.acct).sort()).toEqual([`bob@${b.domain}`, 'carol']);
      },
      30_000,
      'alice has both followers',
    );

    // newalice names alice as her former account, on B's page.
    const onB = await signedIn(b, newAlice);
    await onB.goto(`${b.url}/settings/aliases`);
    await onB.getByLabel('Handle of the old account').fill(`alice@${a.domain}`);
    await press(onB, 'Create alias');
    await expect(onB.getByRole('status').textContent()).resolves.toContain('Successfully created a new alias');

    // alice moves on A's page; A fetches newalice's actor again and finds the alias.
    const onA = await signedIn(a, alice);
    await onA.goto(`${a.url}/settings/migration`);
    await onA.getByLabel('Handle of the new account').fill(`newalice@${b.domain}`);
    await onA.getByLabel('Current password').fill(alice.password);
    await press(onA, 'Move followers');
    await expect(onA.getByRole('status').textContent()).resolves.toContain(
      `Your account is now redirecting to newalice@${b.domain}`,
    );

    // B: the Move arrived; bob follows newalice instead, and alice shows as moved.
    await settles(
      async () => {
        const rel = await b.call(
          'GET',
          `/api/v1/accounts/relationships?id[]=${newAlice.account._id}&id[]=${aliceOnB}`,
          bob.token,
        );
        expect(rel.body[0]).toMatchObject({ following: true });
        expect(rel.body[1]).toMatchObject({ following: false });
      },
      40_000,
      'bob moved to newalice on B',
    );
    const movedOnB = await b.call('GET', `/api/v1/accounts/${aliceOnB}`, bob.token);
    expect(movedOnB.body.moved).toMatchObject({ id: String(newAlice.account._id) });

    // A: carol follows newalice on B (accepted there), with her options, and no longer alice.
    const newAliceOnA = (await a.call('GET', `/api/v1/accounts/lookup?acct=newalice@${b.domain}`, carol.token)).body.id;
    await settles(
      async () => {
        const rel = await a.call(
          'GET',
          `/api/v1/accounts/relationships?id[]=${newAliceOnA}&id[]=${alice.account._id}`,
          carol.token,
        );
        expect(rel.body[0]).toMatchObject({ following: true, requested: false, notifying: true });
        expect(rel.body[1]).toMatchObject({ following: false });
      },
      40_000,
      'carol follows newalice across servers',
    );
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/accounts/${newAlice.account._id}/followers`, newAlice.token);
        expect(res.body.map((x: { acct: string }) => x.acct).sort()).toEqual(['bob', `carol@${a.domain}`]);
      },
      40_000,
      'newalice has both followers',
    );
    // A second move within 30 days is refused.
    await onA.goto(`${a.url}/settings/migration`);
    await expect(onA.locator('main').textContent()).resolves.toContain('This function will become available again');
    await onA.context().close();
    await onB.context().close();
  });
  it('deleting an account on A: its Delete reaches B, which drops the account and the follow', async () => {
    const dora = await createTestUser(a.core, { username: 'dora' });
    const ed = await createTestUser(b.core, { username: 'ed' });
    const doraOnB = (await b.call('GET', `/api/v1/accounts/lookup?acct=dora@${a.domain}`, ed.token)).body.id;
    expect((await b.call('POST', `/api/v1/accounts/${doraOnB}/follow`, ed.token)).status).toBe(200);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/accounts/${dora.account._id}/followers`, dora.token);
        expect(res.body.map((x: { acct: string }) => x.acct)).toEqual([`ed@${b.domain}`]);
      },
      30_000,
      'ed follows dora',
    );

    const onA = await signedIn(a, dora);
    await onA.goto(`${a.url}/settings/delete`);
    await onA.getByLabel('Enter your current password').fill(dora.password);
    await press(onA, 'Delete account');
    await expect(onA.locator('main').textContent()).resolves.toContain('Your account was successfully deleted');
    await onA.context().close();

    await settles(
      async () => {
        const rel = await b.call('GET', `/api/v1/accounts/relationships?id[]=${doraOnB}`, ed.token);
        expect(rel.body[0] ?? { following: false }).toMatchObject({ following: false });
        const res = await b.call('GET', `/api/v1/accounts/${doraOnB}`, ed.token);
        expect(res.status === 404 || res.body.suspended === true).toBe(true);
      },
      40_000,
      'dora gone on B',
    );
  });
});
