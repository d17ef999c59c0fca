// The account pages in a real browser (Debian's Chromium driven by playwright-core), with the
// mailer pipeline sending to a test SMTP sink: sign up → confirm → log in; forgot password → reset
// → the old tokens and sessions are gone; change of password and e-mail; revoking an app. Every
// page is checked with axe-core (no serious or critical violation, light and dark theme), and
// screenshots of the main pages go to var/screenshots/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium, newBrowserPage, signIn, submitForm } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { runMailerPipeline } from '../../../pipelines/mailer/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer } from '../../support/fixtures.ts';
import { SmtpSink, confirmationLink, type ReceivedMail } from '../../support/smtpSink.ts';
import { userTokenThroughBrowser } from '../accounts/browser.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { setRegistrationsMode } from '../../../services/core/settings/settings.ts';
import { addRule } from '../../../services/core/instance/rules.ts';
import { png } from '../../support/mediaFiles.ts';
import { startStreamingServer } from '../../../services/streaming/server.ts';
import { authorizeUrl, registerApp } from '../accounts/browser.ts';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

function resetLink(mail: ReceivedMail): string {
  const m = /(https?:\/\/\S+\/auth\/password\/edit\?reset_password_token=[\w%-]+)/.exec(mail.text);
  if (!m) throw new Error(`no reset link in mail:\n${mail.text}`);
  return m[1];
}

describeWithBrowser('accountPages.test.ts')('account pages in a real browser (Chromium)', () => {
  const smtp = new SmtpSink();
  let core: Core;
  let server: TestServer;
  let mailer: Pipeline;
  let browser: Browser;

  /** The same path on the test server (links in mails name the configured domain). */
  const local = (link: string): string => {
    const u = new URL(link);
    return `${server.url}${u.pathname}${u.search}`;
  };

  const newPage = (opts: { dark?: boolean; locale?: string } = {}) =>
    newBrowserPage(browser, { ...opts, locale: opts.locale ?? 'en-US' });
  const submit = (page: Page, button: string) => submitForm(page, button);
  const logIn = (page: Page, email: string, password: string) => signIn(page, server.url, email, password);

  async function api(token: string, path = '/api/v1/accounts/verify_credentials'): Promise<number> {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await smtp.start();
    ({ core } = await createTestCore(
      testConfig({
        SMTP_SERVER: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_FROM_ADDRESS: 'notifications@social.test',
      }),
    ));
    server = await startTestServer(core);
    mailer = await runMailerPipeline(core, {
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 100,
      lagIntervalMs: 0,
      retryDelaysMs: [200],
    });
    await addRule(core, { text: 'Be kind to each other', hint: 'No harassment, no hate.' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await mailer?.stop();
    await server?.close();
    if (core) await closeTestCore(core);
    await smtp.stop();
  });

  it('sign up → confirm the e-mail → log in; the pages carry the security headers', async () => {
    const { context, page } = await newPage();
    const res = await page.goto(`${server.url}/auth/sign_in`);
    const headers = res!.headers();
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['x-content-type-options']).toBe('nosniff');
    await expectAccessible(page, 'sign in');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-sign-in.png'), fullPage: true });

    // From the log-in page to the sign-up page, which shows the rules.
    await Promise.all([page.waitForURL('**/auth/sign_up'), page.getByRole('link', { name: 'Sign up' }).click()]);
    await expect(page.locator('ol.rules').textContent()).resolves.toContain('Be kind to each other');
    await expectAccessible(page, 'sign up');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-sign-up.png'), fullPage: true });

    // Mastodon's rules: a short password, a reserved username and no agreement are all reported.
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('E-mail address').fill('dora@example.test');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByLabel('Confirm password').fill('short');
    await submit(page, 'Sign up');
    const errors = await page.locator('.field-error').allTextContents();
    expect(errors).toEqual(
      expect.arrayContaining([
        'Username is reserved',
        'Password is too short (minimum is 8 characters)',
        expect.stringContaining('must be accepted'),
      ]),
    );
    await expect(page.getByLabel('E-mail address').inputValue()).resolves.toBe('dora@example.test');
    await expectAccessible(page, 'sign up with errors');

    await page.getByLabel('Username').fill('dora');
    await page.getByLabel('Password', { exact: true }).fill('a fine long password');
    await page.getByLabel('Confirm password').fill('a fine long password');
    await page.getByLabel(/I have read and agree/).check();
    await submit(page, 'Sign up');
    await expect(page.locator('h1').textContent()).resolves.toBe('Check your inbox');

    // Not confirmed yet: Mastodon's message.
    await logIn(page, 'dora@example.test', 'a fine long password');
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'You have to confirm your email address before continuing.',
    );

    const first = await smtp.waitFor('dora@example.test');
    // A lost mail: a new link on request (the old one stops working).
    await Promise.all([
      page.waitForURL('**/auth/confirmation/new'),
      page.getByRole('link', { name: "Didn't receive a confirmation link?" }).click(),
    ]);
    await expectAccessible(page, 'confirmation new');
    await page.getByLabel('E-mail address').fill('dora@example.test');
    await submit(page, 'Resend confirmation instructions');
    await expect(page.locator('main').textContent()).resolves.toContain('If your email address exists in our database');
    const second = await smtp.waitFor('dora@example.test', 1);
    expect(confirmationLink(second)).not.toBe(confirmationLink(first));
    const stale = await page.goto(local(confirmationLink(first)));
    expect(stale?.status()).toBe(404);
    await page.goto(local(confirmationLink(second)));
    await expect(page.locator('h1').textContent()).resolves.toBe('E-mail address confirmed');
    await expectAccessible(page, 'confirmation');

    await logIn(page, 'dora@example.test', 'a fine long password');
    expect(new URL(page.url()).pathname).toBe('/auth/edit');
    await expect(page.locator('main').textContent()).resolves.toContain('@dora');
    await expectAccessible(page, 'account');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-account.png'), fullPage: true });

    // Log out: the account page asks for a log-in again.
    await submit(page, 'Log out (@dora)');
    await expect(page.getByRole('status').textContent()).resolves.toBe('You are logged out.');
    await page.goto(`${server.url}/auth/edit`);
    expect(new URL(page.url()).pathname).toBe('/auth/sign_in');
    await context.close();
  });

  it('approval mode asks for a reason; a closed server says so; the same rules as the API', async () => {
    // A German browser: the pages fall back to English, the account keeps the browser's language.
    const { context, page } = await newPage({ dark: true, locale: 'de-DE' });
    await setRegistrationsMode(core, 'approved');
    await page.goto(`${server.url}/auth/sign_up`);
    await expect(page.getByLabel('Why do you want to join?').isVisible()).resolves.toBe(true);
    await expectAccessible(page, 'sign up (approval, dark)');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-sign-up-dark.png'), fullPage: true });
    await page.getByLabel('Username').fill('erin');
    await page.getByLabel('E-mail address').fill('erin@example.test');
    await page.getByLabel('Password', { exact: true }).fill('another long password');
    await page.getByLabel('Confirm password').fill('another long password');
    await page.getByLabel('Why do you want to join?').fill('I like the rules.');
    await page.getByLabel(/I have read and agree/).check();
    await submit(page, 'Sign up');
    await expect(page.locator('main').textContent()).resolves.toContain('we will review your application');
    const erin = await collection(core.db, users).findOne({ emailLower: 'erin@example.test' });
    expect(erin).toMatchObject({
      approved: false,
      signUpReason: 'I like the rules.',
      createdByAppId: null,
      locale: 'de-DE',
    });
    await collection(core.db, users).updateOne({ _id: erin!._id }, { $set: { confirmedAt: new Date() } });
    await logIn(page, 'erin@example.test', 'another long password');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Your application is pending review');

    await setRegistrationsMode(core, 'closed');
    const res = await page.goto(`${server.url}/auth/sign_up`);
    expect(res?.status()).toBe(403);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('is not accepting new members');
    expect(await page.locator('form[action="/auth/sign_up"]').count()).toBe(0);
    await expectAccessible(page, 'sign up closed (dark)');
    await setRegistrationsMode(core, 'open');

    // Suspended and disabled logins get their messages.
    const frank = await createTestUser(core, { username: 'frank', email: 'frank@example.test' });
    await collection(core.db, accounts).updateOne({ _id: frank.account._id }, { $set: { suspendedAt: new Date() } });
    await logIn(page, 'frank@example.test', frank.password);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Your account has been suspended.');
    const gina = await createTestUser(core, { username: 'gina', email: 'gina@example.test' });
    await collection(core.db, users).updateOne({ _id: gina.user._id }, { $set: { disabled: true } });
    await logIn(page, 'gina@example.test', gina.password);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Your login is currently disabled.');
    await context.close();
  });

  it('forgot password → e-mail → new password: single-use link, every old token and session revoked', async () => {
    const hana = await createTestUser(core, { username: 'hana', email: 'hana@example.test' });
    const viaOauth = await userTokenThroughBrowser(server.url, { email: 'hana@example.test', password: hana.password });
    // A second browser, signed in before the reset.
    const other = await newPage();
    await logIn(other.page, 'hana@example.test', hana.password);
    expect(new URL(other.page.url()).pathname).toBe('/auth/edit');

    const { context, page } = await newPage();
    await page.goto(`${server.url}/auth/sign_in`);
    await Promise.all([
      page.waitForURL('**/auth/password/new'),
      page.getByRole('link', { name: 'Forgot your password?' }).click(),
    ]);
    await expectAccessible(page, 'password new');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-password-new.png'), fullPage: true });
    // Unknown and known addresses get the same answer.
    await page.getByLabel('E-mail address').fill('nobody@example.test');
    await submit(page, 'Send instructions');
    const unknownAnswer = await page.locator('main').textContent();
    await page.goto(`${server.url}/auth/password/new`);
    await page.getByLabel('E-mail address').fill('HANA@example.test');
    await submit(page, 'Send instructions');
    expect(await page.locator('main').textContent()).toBe(unknownAnswer);

    const mail = await smtp.waitFor('hana@example.test');
    expect(mail.subject).toContain('Reset password instructions');
    const link = local(resetLink(mail));
    await page.goto(link);
    await expectAccessible(page, 'password edit');
    await page.getByLabel('New password').fill('brand new password');
    await page.getByLabel('Confirm password').fill('does not match');
    await submit(page, 'Change password');
    await expect(page.locator('.field-error').textContent()).resolves.toContain("doesn't match");
    await page.getByLabel('New password').fill('brand new password');
    await page.getByLabel('Confirm password').fill('brand new password');
    await submit(page, 'Change password');
    await expect(page.locator('h1').textContent()).resolves.toBe('Password changed');

    // Every token and session of before is gone; the user is told.
    expect(await api(hana.token)).toBe(401);
    expect(await api(viaOauth.token)).toBe(401);
    await other.page.goto(`${server.url}/auth/edit`);
    expect(new URL(other.page.url()).pathname).toBe('/auth/sign_in');
    await other.context.close();
    const notice = await smtp.waitFor('hana@example.test', 1);
    expect(notice.subject).toContain('Password changed');

    // The link works once.
    const again = await page.goto(link);
    expect(again?.status()).toBe(404);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('invalid or was already used');
    // The old password no longer works, the new one does.
    await logIn(page, 'hana@example.test', hana.password);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Invalid E-mail address or password.');
    await logIn(page, 'hana@example.test', 'brand new password');
    expect(new URL(page.url()).pathname).toBe('/auth/edit');

    // A link older than 6 hours has expired.
    await page.goto(`${server.url}/auth/password/new`);
    await page.getByLabel('E-mail address').fill('hana@example.test');
    await submit(page, 'Send instructions');
    const late = await smtp.waitFor('hana@example.test', 2);
    await collection(core.db, users).updateOne(
      { _id: hana.user._id },
      { $set: { resetPasswordSentAt: new Date(Date.now() - 6 * 3600 * 1000 - 60_000) } },
    );
    const expired = await page.goto(local(resetLink(late)));
    expect(expired?.status()).toBe(410);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('has expired');
    await context.close();
  });

  it('changes the password (current one required) and the e-mail (confirmed at the new address, the old one told)', async () => {
    const ivan = await createTestUser(core, { username: 'ivan', email: 'ivan@example.test' });
    const { context, page } = await newPage();
    await logIn(page, 'ivan@example.test', ivan.password);

    const passwordForm = page.locator('form', { has: page.locator('input[name="change"][value="password"]') });
    await passwordForm.getByLabel('Current password').fill('wrong password');
    await passwordForm.getByLabel('New password').fill('ivan new password');
    await passwordForm.getByLabel('Confirm password').fill('ivan new password');
    await submit(page, 'Change password');
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Current password is invalid');
    await passwordForm.getByLabel('Current password').fill(ivan.password);
    await passwordForm.getByLabel('New password').fill('ivan new password');
    await passwordForm.getByLabel('Confirm password').fill('ivan new password');
    await submit(page, 'Change password');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your password has been changed');
    expect((await smtp.waitFor('ivan@example.test')).subject).toContain('Password changed');
    // Still signed in here; the old password is gone.
    await page.goto(`${server.url}/auth/edit`);
    expect(new URL(page.url()).pathname).toBe('/auth/edit');

    const emailForm = page.locator('form', { has: page.locator('input[name="change"][value="email"]') });
    await emailForm.getByLabel('New e-mail address').fill('ivan.new@example.test');
    await emailForm.getByLabel('Current password').fill('ivan new password');
    await submit(page, 'Change e-mail address');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Check the inbox of your new address');
    await expect(page.locator('main').textContent()).resolves.toContain(
      'Waiting for confirmation of ivan.new@example.test',
    );
    const told = await smtp.waitFor('ivan@example.test', 1);
    expect(told.subject).toContain('E-mail changed');
    expect(told.text).toContain('ivan.new@example.test');
    const confirm = await smtp.waitFor('ivan.new@example.test');
    await page.goto(local(confirmationLink(confirm)));
    // Ivan signed up through an app (the fixture's, out-of-band only): the confirmation page shows.
    await expect(page.locator('h1').textContent()).resolves.toBe('E-mail address confirmed');
    const user = await collection(core.db, users).findOne({ _id: ivan.user._id });
    expect(user).toMatchObject({ email: 'ivan.new@example.test', unconfirmedEmail: null });
    await page.goto(`${server.url}/auth/edit`);
    await submit(page, 'Log out (@ivan)');
    await logIn(page, 'ivan.new@example.test', 'ivan new password');
    expect(new URL(page.url()).pathname).toBe('/auth/edit');
    await context.close();
  });

  it('lists the authorized apps with their last use and revokes one (its tokens stop working, its streaming socket closes)', async () => {
    const june = await createTestUser(core, { username: 'june', email: 'june@example.test' });
    const viaOauth = await userTokenThroughBrowser(server.url, { email: 'june@example.test', password: june.password });
    expect(await api(viaOauth.token)).toBe(200);
    const { context, page } = await newPage();
    await page.goto(`${server.url}/oauth/authorized_applications`);
    // Behind a log-in, which returns here.
    expect(new URL(page.url()).pathname).toBe('/auth/sign_in');
    await page.getByLabel('E-mail address').fill('june@example.test');
    await page.getByLabel('Password', { exact: true }).fill(june.password);
    await submit(page, 'Log in');
    expect(new URL(page.url()).pathname).toBe('/oauth/authorized_applications');
    const items = page.locator('ul.apps > li');
    await expect(items.count()).resolves.toBe(2);
    const oauthApp = items.filter({ hasText: 'Browser test client' });
    await expect(oauthApp.textContent()).resolves.toMatch(/Last used \d{4}-\d\d-\d\d/);
    await expectAccessible(page, 'authorized apps');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-authorized-apps.png'), fullPage: true });

    // An open streaming socket of the app's token.
    const streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
    const socket = new WebSocket(
      `ws://127.0.0.1:${streaming.port}/api/v1/streaming?stream=user&access_token=${encodeURIComponent(viaOauth.token)}`,
    );
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      socket.addEventListener('error', () => reject(new Error('streaming socket failed to open')));
    });
    const closed = new Promise<number>((resolve) => socket.addEventListener('close', (e) => resolve(e.code)));

    await submit(page, 'Revoke access of Browser test client');
    await expect(page.getByRole('status').textContent()).resolves.toBe(
      'Access of Browser test client has been revoked.',
    );
    await expect(items.count()).resolves.toBe(1);
    expect(await api(viaOauth.token)).toBe(401);
    // The streaming server closes the socket of the revoked token (at its next sweep).
    expect(await closed).toBe(1008);
    await streaming.stop(500);
    // The other app keeps its token.
    expect(await api(june.token)).toBe(200);
    await context.close();
  });

  it('edits the public profile (fields, options, avatar) and the posting preferences; the API sees them', async () => {
    const kim = await createTestUser(core, { username: 'kim', email: 'kim@example.test' });
    const { context, page } = await newPage();
    await logIn(page, 'kim@example.test', kim.password);
    await Promise.all([page.waitForURL('**/settings/profile'), page.getByRole('link', { name: 'Profile' }).click()]);
    await expectAccessible(page, 'profile');
    await page.getByLabel('Display name').fill('Kim K.');
    await page.getByLabel('Bio').fill('Hello #fediverse');
    await page.getByLabel('Label 1').fill('Website');
    await page.getByLabel('Content 1').fill('https://kim.example');
    await page.getByLabel(/Require follow requests/).check();
    await page.getByLabel(/This is an automated account/).check();
    await page.getByLabel('Profile picture', { exact: true }).setInputFiles({
      name: 'avatar.png',
      mimeType: 'image/png',
      buffer: await png(120, 120),
    });
    await page.getByLabel('Profile picture alt text').fill('Kim waving from a canoe');
    await page.getByLabel('Header picture alt text').fill('A lake at dusk');
    await submit(page, 'Save changes');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
    await expect(page.getByLabel('Display name').inputValue()).resolves.toBe('Kim K.');
    await expect(page.getByLabel('Profile picture alt text').inputValue()).resolves.toBe('Kim waving from a canoe');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-profile.png'), fullPage: true });

    const me = (await fetch(`${server.url}/api/v1/accounts/verify_credentials`, {
      headers: { authorization: `Bearer ${kim.token}` },
    }).then((r) => r.json())) as Record<string, unknown>;
    expect(me).toMatchObject({
      display_name: 'Kim K.',
      locked: true,
      bot: true,
      source: expect.objectContaining({ note: 'Hello #fediverse' }),
    });
    expect(me.fields).toEqual([expect.objectContaining({ name: 'Website' })]);
    expect(String(me.avatar)).not.toContain('missing.png');
    expect(me).toMatchObject({ avatar_description: 'Kim waving from a canoe', header_description: 'A lake at dusk' });
    // The public profile describes the pictures, and so does the actor (Mastodon 4.6: the Image's name).
    await page.goto(`${server.url}/@kim`);
    await expect(page.getByRole('img', { name: 'Kim waving from a canoe' }).count()).resolves.toBe(1);
    await expect(page.getByRole('img', { name: 'A lake at dusk' }).count()).resolves.toBe(1);
    const actor = (await fetch(`${server.url}/users/kim`, { headers: { accept: 'application/activity+json' } }).then(
      (r) => r.json(),
    )) as { icon?: { name?: string; url?: string } };
    expect(actor.icon).toMatchObject({ type: 'Image', name: 'Kim waving from a canoe' });
    await page.goto(`${server.url}/settings/profile`);

    // A display name over 30 characters (past the field's maxlength, as a script could send it) is
    // refused with Mastodon's message, and nothing is saved.
    await page.getByLabel('Display name').evaluate((el) => el.removeAttribute('maxlength'));
    await page.getByLabel('Display name').fill('x'.repeat(31));
    await page.getByLabel(/Require follow requests/).uncheck();
    await submit(page, 'Save changes');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Display name is too long');
    const still = await collection(core.db, accounts).findOne({ _id: kim.account._id });
    expect(still).toMatchObject({ displayName: 'Kim K.', locked: true });

    await page.goto(`${server.url}/settings/preferences`);
    await expectAccessible(page, 'preferences');
    await page.getByLabel('Posting privacy').selectOption('private');
    await page.getByLabel('Posting language').selectOption('de');
    await page.getByLabel('Always mark media as sensitive').check();
    await submit(page, 'Save changes');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Changes successfully saved!');
    await page.screenshot({ path: join(SCREENSHOTS, 'web-preferences.png'), fullPage: true });
    const prefs = await fetch(`${server.url}/api/v1/preferences`, {
      headers: { authorization: `Bearer ${kim.token}` },
    }).then((r) => r.json());
    expect(prefs).toMatchObject({
      'posting:default:visibility': 'private',
      'posting:default:language': 'de',
      'posting:default:sensitive': true,
    });
    await context.close();
  });

  it('the OAuth pages (log-in, consent, out-of-band code) pass axe in both themes', async () => {
    const lee = await createTestUser(core, { username: 'lee', email: 'lee@example.test' });
    const client = await registerApp(server.url, 'urn:ietf:wg:oauth:2.0:oob', 'read write admin:read');
    for (const dark of [false, true]) {
      const { context, page } = await newPage({ dark });
      await page.goto(
        `${server.url}${authorizeUrl(client, { redirectUri: 'urn:ietf:wg:oauth:2.0:oob', scope: 'read admin:read' })}`,
      );
      await expectAccessible(page, `oauth log-in (dark: ${dark})`);
      await page.getByLabel('E-mail address').fill('lee@example.test');
      await page.getByLabel('Password', { exact: true }).fill(lee.password);
      await submit(page, 'Log in');
      await expectAccessible(page, `consent (dark: ${dark})`);
      if (dark) await page.screenshot({ path: join(SCREENSHOTS, 'web-consent-dark.png'), fullPage: true });
      await Promise.all([
        page.waitForURL('**/oauth/authorize/native?**'),
        page.getByRole('button', { name: 'Authorize' }).click(),
      ]);
      await expectAccessible(page, `code (dark: ${dark})`);
      await context.close();
    }
  });

  it('lists the browser sessions with their last use, logs one out, then all others', async () => {
    const lou = await createTestUser(core, { username: 'lou', email: 'lou@example.test' });
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    const here = await newPage();
    const there = await browser.newContext({ userAgent: firefox });
    const therePage = await there.newPage();
    await logIn(here.page, 'lou@example.test', lou.password);
    await logIn(therePage, 'lou@example.test', lou.password);

    await here.page.goto(`${server.url}/auth/edit`);
    const sessions = here.page.locator('#session-list > li');
    await expect(sessions.count()).resolves.toBe(2);
    await expect(sessions.filter({ hasText: 'This session' }).count()).resolves.toBe(1);
    const other = sessions.filter({ hasText: 'Firefox on Linux' });
    await expect(other.textContent()).resolves.toMatch(/Last used \d{4}-\d\d-\d\d .* from 127\.0\.0\.1/);
    await expectAccessible(here.page, 'account with sessions');
    await here.page.screenshot({ path: join(SCREENSHOTS, 'web-account-sessions.png'), fullPage: true });

    await Promise.all([here.page.waitForLoadState('load'), other.getByRole('button', { name: 'Revoke' }).click()]);
    await expect(here.page.getByRole('status').textContent()).resolves.toBe('The session has been logged out.');
    await expect(sessions.count()).resolves.toBe(1);
    await therePage.goto(`${server.url}/auth/edit`);
    expect(new URL(therePage.url()).pathname).toBe('/auth/sign_in');

    // Back in there, then every other session out at once; this one stays.
    await logIn(therePage, 'lou@example.test', lou.password);
    await here.page.goto(`${server.url}/auth/edit`);
    await submit(here.page, 'Log out all other sessions');
    await expect(here.page.getByRole('status').textContent()).resolves.toBe('All other sessions have been logged out.');
    await therePage.goto(`${server.url}/auth/edit`);
    expect(new URL(therePage.url()).pathname).toBe('/auth/sign_in');
    await here.page.goto(`${server.url}/auth/edit`);
    expect(new URL(here.page.url()).pathname).toBe('/auth/edit');
    await there.close();
    await here.context.close();
  });

  it('a form without its CSRF token is refused with a page', async () => {
    const res = await fetch(`${server.url}/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=x%40example.test',
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('did not come from this site');
  });
});
