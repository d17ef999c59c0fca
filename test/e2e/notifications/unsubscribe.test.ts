// Notification e-mails as Mastodon sends them, end to end (API, notifications pipeline, the
// scheduler's wait, the mailer, a real SMTP server, Chromium): each mail waits
// NOTIFICATION_EMAIL_DELAY (here 2 s; Mastodon's two minutes) and is dropped if by then its
// notification is gone or its user no longer functional; each carries List-ID and the one-click
// List-Unsubscribe headers and an unsubscribe link in its footer, which works in a browser (a
// confirmation page with a CSRF-protected form) and as a one-click POST without a session; a
// forged token gets a 404.
import type { Browser } from 'playwright-core';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { notificationMails } from '../../../services/core/model/notificationMails.ts';
import { users } from '../../../services/core/model/users.ts';
import { notificationEmailsOf, updateNotificationEmails } from '../../../services/core/users/notificationEmails.ts';
import { setDisabled } from '../../../services/core/users/moderation.ts';
import { startMailingApi, type MailingApi } from '../../support/mailingApi.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/eventually.ts';
import { describeWithBrowser, launchChromium, newBrowserPage, submitForm } from '../../support/browser.ts';
import { expectAccessible } from '../../support/axe.ts';
import type { ReceivedMail } from '../../support/smtpSink.ts';

const DELAY_SECONDS = 2;

describeWithBrowser('unsubscribe.test.ts')('notification e-mails: the wait and unsubscribing', () => {
  let mailing: MailingApi;
  let core: Core;
  let browser: Browser;
  let author: TestUser, reader: TestUser, dropped: TestUser;

  beforeAll(async () => {
    mailing = await startMailingApi({ notificationEmailDelay: DELAY_SECONDS });
    core = mailing.api.core;
    [author, reader, dropped] = await Promise.all(
      ['author', 'reader', 'dropped'].map((username) =>
        createTestUser(core, { username, email: `${username}@example.test` }),
      ),
    );
    await updateNotificationEmails(core, reader.user._id, { favourite: true });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await mailing?.close();
  });

  const call = (method: string, path: string, token: string, body?: Record<string, unknown>) =>
    mailing.api.call(method, path, token, body);
  /** The mails the scheduler asked the mailer for, by recipient and template. */
  const requested = () =>
    mailing.api.published
      .filter((e) => e.type === 'MailRequested')
      .map((e) => `${String(e.payload.to)} ${String(e.payload.template)}`);
  const nothingWaiting = () =>
    eventually(async () => (await collection(core.db, notificationMails).countDocuments({})) === 0 || undefined);
  /** A link of the mail's footer, pointed at the test server (the mail names the configured domain). */
  const footerLink = (mail: ReceivedMail): URL => {
    const m = /^Unsubscribe: (\S+)$/m.exec(mail.text);
    if (!m) throw new Error(`no unsubscribe link in:\n${mail.text}`);
    expect(m[1].startsWith(`${core.config.baseUrl}/unsubscribe?`)).toBe(true);
    const link = new URL(m[1]);
    return new URL(`${mailing.api.server.url}${link.pathname}${link.search}`);
  };
  const choicesOf = async (user: TestUser) =>
    notificationEmailsOf((await collection(core.db, users).findOne({ _id: user.user._id }))!);

  test('a mail waits for the delay and is not sent when its notification is gone or its user disabled', async () => {
    const undone = await call('POST', '/api/v1/statuses', reader.token, { status: 'favourited, then not' });
    const kept = await call('POST', '/api/v1/statuses', reader.token, { status: 'favourited for good' });
    const started = Date.now();
    expect((await call('POST', `/api/v1/statuses/${undone.body.id}/favourite`, author.token)).status).toBe(200);
    // The notification exists and its mail waits ...
    const pending = await eventually(async () => {
      const n = await collection(core.db, notifications).findOne({
        type: 'favourite',
        statusId: BigInt(undone.body.id),
      });
      return n ? ((await collection(core.db, notificationMails).findOne({ _id: n._id })) ?? undefined) : undefined;
    });
    expect(pending!.dueAt.getTime()).toBeGreaterThanOrEqual(started + DELAY_SECONDS * 1000 - 50);
    // ... when the favourite is undone, which removes the notification.
    expect((await call('POST', `/api/v1/statuses/${undone.body.id}/unfavourite`, author.token)).status).toBe(200);
    // `dropped` is followed, then disabled before the mail is due.
    expect((await call('POST', `/api/v1/accounts/${dropped.account._id}/follow`, author.token)).status).toBe(200);
    await eventually(async () => {
      const n = await collection(core.db, notifications).findOne({ type: 'follow', accountId: dropped.account._id });
      return n ? ((await collection(core.db, notificationMails).findOne({ _id: n._id })) ?? undefined) : undefined;
    });
    await setDisabled(core, dropped.user, true, null);
    expect((await call('POST', `/api/v1/statuses/${kept.body.id}/favourite`, author.token)).status).toBe(200);

    const mail = await mailing.smtp.waitFor(reader.user.email);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_SECONDS * 1000);
    expect(mail.subject).toBe('author favorited your post');
    expect(mail.text).toContain('favourited for good');
    await nothingWaiting();
    expect(requested()).toEqual([`${reader.user.email} favourite`]);
    expect(mail.text).not.toContain('favourited, then not');
  });

  test('the mail has List-ID, List-Unsubscribe and a footer link; the link unsubscribes in Chromium', async () => {
    expect((await call('POST', `/api/v1/accounts/${reader.account._id}/follow`, author.token)).status).toBe(200);
    const mail = await mailing.smtp.waitFor(reader.user.email, 1);
    expect(mail.subject).toBe('author is now following you');
    const headers = mail.raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
    const link = /^List-Unsubscribe: <([^>]+)>$/m.exec(headers)?.[1];
    expect(link).toMatch(new RegExp(`^${core.config.baseUrl}/unsubscribe\\?token=[\\w-]+&type=follow$`));
    expect(headers).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(headers).toMatch(/^List-ID: <follow\.reader\.localhost>$/m);
    const url = footerLink(mail);
    expect(url.search).toBe(new URL(link!).search);

    const { context, page } = await newBrowserPage(browser);
    try {
      await page.goto(url.toString());
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Unsubscribe');
      await expect(page.locator('main, body').first().textContent()).resolves.toContain(
        `unsubscribe from receiving follow notification emails for Mastodon on ${core.config.localDomain} to your email at ${reader.user.email}?`,
      );
      await expectAccessible(page, 'unsubscribe');
      expect((await choicesOf(reader)).follow).toBe(true);
      await submitForm(page, 'Yes, unsubscribe', true);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Unsubscribed');
      await expectAccessible(page, 'unsubscribed');
    } finally {
      await context.close();
    }
    expect((await choicesOf(reader)).follow).toBe(false);
    expect((await choicesOf(reader)).favourite).toBe(true);
  });

  test('a one-click POST (RFC 8058) unsubscribes without a session; forged tokens and other types get a 404', async () => {
    const post = await call('POST', '/api/v1/statuses', reader.token, { status: 'one more' });
    expect((await call('POST', `/api/v1/statuses/${post.body.id}/favourite`, author.token)).status).toBe(200);
    const mail = await mailing.smtp.waitFor(reader.user.email, 2);
    expect(mail.subject).toBe('author favorited your post');
    const url = footerLink(mail);
    expect(url.searchParams.get('type')).toBe('favourite');
    const oneClick = (target: URL | string) =>
      fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
        redirect: 'manual',
      });

    const token = url.searchParams.get('token')!;
    const forged = new URL(url);
    // Another user's id under the reader's signature.
    const [payload, signature] = token.split('--');
    const otherPayload = Buffer.from(
      Buffer.from(payload, 'base64url').toString().replace(String(reader.user._id), String(author.user._id)),
    ).toString('base64url');
    forged.searchParams.set('token', `${otherPayload}--${signature}`);
    forged.searchParams.set('type', 'mention');
    expect((await oneClick(forged)).status).toBe(404);
    expect((await fetch(forged)).status).toBe(404);
    const otherType = new URL(url);
    otherType.searchParams.set('type', 'report');
    expect((await oneClick(otherType)).status).toBe(404);
    // The page's form without its CSRF token is refused.
    const noCsrf = await fetch(`${mailing.api.server.url}/unsubscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, type: 'favourite' }).toString(),
    });
    expect(noCsrf.status).toBe(403);
    expect((await choicesOf(reader)).favourite).toBe(true);

    const res = await oneClick(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('no longer receive favorite notification emails');
    expect((await choicesOf(reader)).favourite).toBe(false);
    expect((await choicesOf(author)).mention).toBe(true);
    // RFC 8058 allows the one-click body as multipart/form-data too.
    const mentions = new URL(url);
    mentions.searchParams.set('type', 'mention');
    const body = new FormData();
    body.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(mentions, { method: 'POST', body })).status).toBe(200);
    expect((await choicesOf(reader)).mention).toBe(false);
  });
});
