// Sign-up end to end: an app registers, gets an app token, signs a person up; the confirmation
// e-mail travels as a MailRequested event through Kafka to the mailer pipeline and over SMTP to a
// real SMTP server; the test follows the link like a browser and the token starts working.
// Also: re-sending (and changing the address), approval mode with the admin log, closed
// registrations, OMNIAUTH_ONLY, the rate limit, and every sign-up error of the specification.
import { randomInt } from 'node:crypto';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import { setRegistrationsMode } from '../../../services/core/settings/settings.ts';
import { approveUser } from '../../../services/core/users/moderation.ts';
import { runMailerPipeline } from '../../../pipelines/mailer/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { createTestApp, createTestUser, type TestServer } from '../../support/fixtures.ts';
import { requester, type Requester } from '../../support/http.ts';
import { issueAccessToken } from '../../../services/core/oauth/tokens.ts';
import { registerApp, type RegisteredApp } from './browser.ts';
import { SmtpSink, confirmationLink } from '../../support/smtpSink.ts';
import { updateNotificationEmails } from '../../../services/core/users/notificationEmails.ts';

const CALLBACK = 'https://app.example/after-confirmation';

function randomIp(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

describe('sign-up with e-mail confirmation', () => {
  const smtp = new SmtpSink();
  let api: TestApi;
  let core: Core;
  let server: TestServer;
  let call: Requester;
  let mailer: Pipeline;
  let app: RegisteredApp;
  let appToken: string;

  async function appTokenFor(a: RegisteredApp, scope = 'read write follow push'): Promise<string> {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: a.client_id,
        client_secret: a.client_secret,
        scope,
      }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async function signUp(
    body: Record<string, unknown>,
    opts: { token?: string; ip?: string; base?: string } = {},
  ): Promise<Response> {
    return requester(opts.base ?? server.url)('POST', '/api/v1/accounts', opts.token ?? appToken, body, {
      'x-forwarded-for': opts.ip ?? randomIp(),
    });
  }

  /** Follows the mailed link like a browser: the link's path on our server, redirects not followed. */
  async function follow(link: string): Promise<Response> {
    expect(link.startsWith(`${core.config.baseUrl}/auth/confirmation?`)).toBe(true);
    const url = new URL(link);
    return fetch(`${server.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  }

  beforeAll(async () => {
    await smtp.start();
    api = await startTestApi({
      SMTP_SERVER: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_FROM_ADDRESS: 'notifications@social.test',
    });
    ({ core, server } = api);
    call = requester(server.url);
    mailer = await runMailerPipeline(core, { ...consumerTuning, retryDelaysMs: [200] });
    app = await registerApp(server.url, `${CALLBACK}\nurn:ietf:wg:oauth:2.0:oob`, 'read write follow push');
    appToken = await appTokenFor(app);
  });

  afterAll(async () => {
    await mailer?.stop();
    await api?.close();
    await smtp.stop();
  });

  it('signs up, mails the link through Kafka and SMTP, and the link confirms and returns to the app', async () => {
    const res = await signUp({
      username: 'carol',
      email: 'carol@example.test',
      password: 'a long password',
      agreement: true,
      locale: 'en',
    });
    expect(res.status).toBe(200);
    const token = (await res.json()) as { access_token: string; token_type: string; scope: string; created_at: number };
    expect(token).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      scope: 'read write follow push',
      created_at: expect.any(Number),
    });

    // Unconfirmed: the token is refused and the account is hidden, except from lookup.
    const refused = await call('GET', '/api/v1/accounts/verify_credentials', token.access_token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'Your login is missing a confirmed e-mail address' });
    const lookup = await fetch(`${server.url}/api/v1/accounts/lookup?acct=carol`);
    expect(lookup.status).toBe(200);
    const { id } = (await lookup.json()) as { id: string };
    expect((await fetch(`${server.url}/api/v1/accounts/${id}`)).status).toBe(404);
    expect(await (await fetch(`${server.url}/api/v1/accounts?id[]=${id}`)).json()).toEqual([]);

    const mail = await smtp.waitFor('carol@example.test');
    expect(mail.from).toBe('notifications@social.test');
    expect(mail.subject).toContain('Confirmation instructions');
    const confirmed = await follow(confirmationLink(mail));
    expect(confirmed.status).toBe(302);
    expect(confirmed.headers.get('location')).toBe(CALLBACK);

    const me = await call('GET', '/api/v1/accounts/verify_credentials', token.access_token);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      id,
      username: 'carol',
      acct: 'carol',
      source: { privacy: 'public', note: '' },
      role: { id: '-99' },
    });
    expect((await fetch(`${server.url}/api/v1/accounts/${id}`)).status).toBe(200);
    // The link works once.
    expect((await follow(confirmationLink(mail))).status).toBe(404);
  });

  it('re-sends the mail, to a new address when given, only for the app the user signed up with', async () => {
    const res = await signUp({
      username: 'dave',
      email: 'dave@example.test',
      password: 'a long password',
      agreement: 'true',
      locale: 'en',
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    const first = await smtp.waitFor('dave@example.test');

    // Another app's token for the same user is refused.
    const other = await registerApp(server.url, CALLBACK, 'read write');
    const user = await collection(core.db, users).findOne({ emailLower: 'dave@example.test' });
    const foreign = await issueAccessToken(core, { appId: BigInt(other.id), userId: user!._id, scopes: ['write'] });
    const wrongApp = await call('POST', '/api/v1/emails/confirmations', foreign.token, {});
    expect(wrongApp.status).toBe(403);
    expect(await wrongApp.json()).toEqual({
      error: 'This method is only available to the application the user originally signed-up with',
    });

    const taken = await call('POST', '/api/v1/emails/confirmations', token, { email: 'carol@example.test' });
    expect(taken.status).toBe(422);
    expect(((await taken.json()) as { details: unknown }).details).toEqual({
      email: [{ error: 'ERR_TAKEN', description: 'has already been taken' }],
    });

    const resent = await call('POST', '/api/v1/emails/confirmations', token, { email: 'dave.new@example.test' });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toEqual({});
    const second = await smtp.waitFor('dave.new@example.test');
    // The earlier link stopped working; the new one confirms and switches the address.
    expect((await follow(confirmationLink(first))).status).toBe(404);
    expect((await follow(confirmationLink(second))).status).toBe(302);
    const after = await collection(core.db, users).findOne({ _id: user!._id });
    expect(after).toMatchObject({ email: 'dave.new@example.test', unconfirmedEmail: null });
    expect(after!.confirmedAt).toBeInstanceOf(Date);

    const again = await call('POST', '/api/v1/emails/confirmations', token, {});
    expect(again.status).toBe(403);
    expect(await again.json()).toEqual({
      error: 'This method is only available while the e-mail is awaiting confirmation',
    });
  });

  it('in approval mode keeps the confirmed user hidden until an administrator approves, and logs the approval', async () => {
    await setRegistrationsMode(core, 'approved');
    // Staff who may manage users hear of the confirmed sign-up, unless they turned that e-mail off.
    const admin = await createTestUser(core, { role: 'Admin', email: 'admin@staff.test' });
    const quiet = await createTestUser(core, { role: 'Admin', email: 'quiet@staff.test' });
    await updateNotificationEmails(core, quiet.user._id, { pending_account: false });
    try {
      const res = await signUp({
        username: 'erin',
        email: 'erin@example.test',
        password: 'a long password',
        agreement: true,
        locale: 'en',
        reason: 'I like it here',
      });
      expect(res.status).toBe(200);
      const { access_token: token } = (await res.json()) as { access_token: string };
      expect((await follow(confirmationLink(await smtp.waitFor('erin@example.test')))).status).toBe(302);
      const pending = await call('GET', '/api/v1/accounts/verify_credentials', token);
      expect(pending.status).toBe(403);
      expect(await pending.json()).toEqual({ error: 'Your login is currently pending approval' });
      const { id } = (await (await fetch(`${server.url}/api/v1/accounts/lookup?acct=erin`)).json()) as { id: string };
      expect((await fetch(`${server.url}/api/v1/accounts/${id}`)).status).toBe(404);
      const review = await smtp.waitFor('admin@staff.test');
      expect(review.subject).toBe(`New account up for review on ${core.config.localDomain} (erin)`);
      expect(review.text).toContain('You can approve or reject this application.');
      expect(review.text).toContain('Reason: I like it here');
      expect(review.text).toContain(`/admin/accounts/${id}`);
      // Both were decided together: the quiet one was asked for nothing.
      const asked = api.published.filter((e) => e.type === 'MailRequested').map((e) => e.payload.to);
      expect(asked).toContain('admin@staff.test');
      expect(asked).not.toContain('quiet@staff.test');

      const user = await collection(core.db, users).findOne({ emailLower: 'erin@example.test' });
      expect(user).toMatchObject({ approved: false, signUpReason: 'I like it here' });
      await approveUser(core, user!, admin.account._id);
      expect((await fetch(`${server.url}/api/v1/accounts/${id}`)).status).toBe(200);
      expect((await call('GET', '/api/v1/accounts/verify_credentials', token)).status).toBe(200);
      const welcome = await smtp.waitFor('erin@example.test', 1);
      expect(welcome.subject).toContain('Your account has been approved');
      const log = await collection(core.db, adminActions).findOne({ action: 'approve', targetId: String(user!._id) });
      expect(log).toMatchObject({ accountId: admin.account._id, targetType: 'User', humanIdentifier: 'erin' });
    } finally {
      await setRegistrationsMode(core, 'open');
    }
  });

  it('refuses sign-ups with 403 when registrations are closed', async () => {
    await setRegistrationsMode(core, 'closed');
    try {
      const res = await signUp({
        username: 'frank',
        email: 'frank@example.test',
        password: 'a long password',
        agreement: true,
        locale: 'en',
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'This action is not allowed' });
    } finally {
      await setRegistrationsMode(core, 'open');
    }
  });

  it('refuses sign-ups with 403 when OMNIAUTH_ONLY is true', async () => {
    const omni = await startTestApi({ OMNIAUTH_ONLY: 'true' });
    try {
      const { token } = await createTestApp(omni.core);
      const res = await signUp(
        { username: 'gina', email: 'gina@example.test', password: 'a long password', agreement: true, locale: 'en' },
        { token, base: omni.server.url },
      );
      expect(res.status).toBe(403);
    } finally {
      await omni.close();
    }
  });

  it('accepts only app tokens from the client-credentials grant', async () => {
    const { token } = await createTestUser(core);
    const res = await signUp(
      { username: 'hank', email: 'hank@example.test', password: 'a long password', agreement: true, locale: 'en' },
      { token },
    );
    expect(res.status).toBe(403);
    const none = await fetch(`${server.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(none.status).toBe(401);
    const readOnly = await appTokenFor(app, 'read');
    expect(
      (
        await signUp(
          { username: 'hank', email: 'hank@example.test', password: 'a long password', agreement: true },
          { token: readOnly },
        )
      ).status,
    ).toBe(403);
  });

  it('rejects a sign-up without agreement as invalid (422 with details)', async () => {
    for (const agreement of [false, '0', undefined]) {
      const res = await signUp({
        username: 'ivan',
        email: 'ivan@example.test',
        password: 'a long password',
        agreement,
        locale: 'en',
      });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { error: string; details: Record<string, unknown> };
      expect(body.error).toBe('Validation failed: Agreement must be accepted');
      expect(body.details).toEqual({ agreement: [{ error: 'ERR_ACCEPTED', description: 'must be accepted' }] });
    }
  });

  it('rejects invalid data with per-field details in Mastodon’s shape', async () => {
    const res = await signUp({
      username: 'carol',
      email: 'not-an-address',
      password: 'short',
      agreement: true,
      locale: 'en',
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error:
        'Validation failed: Username has already been taken, Email is invalid, Password is too short (minimum is 8 characters)',
      details: {
        username: [{ error: 'ERR_TAKEN', description: 'has already been taken' }],
        email: [{ error: 'ERR_INVALID', description: 'is invalid' }],
        password: [{ error: 'ERR_TOO_SHORT', description: 'is too short (minimum is 8 characters)' }],
      },
    });
    const reserved = await signUp({
      username: 'admin',
      email: 'x@example.test',
      password: 'a long password',
      agreement: true,
    });
    expect(((await reserved.json()) as { details: unknown }).details).toEqual({
      username: [{ error: 'ERR_RESERVED', description: 'is reserved' }],
    });
    const blank = await signUp({ agreement: true });
    expect(((await blank.json()) as { details: Record<string, { error: string }[]> }).details).toEqual({
      username: [{ error: 'ERR_BLANK', description: "can't be blank" }],
      email: [
        { error: 'ERR_BLANK', description: "can't be blank" },
        { error: 'ERR_INVALID', description: 'is invalid' },
      ],
      password: [{ error: 'ERR_BLANK', description: "can't be blank" }],
    });
    // What a client library's suite sends (masto.js against Mastodon 4.6): an unknown locale is
    // no error (Mastodon drops it), the blank e-mail is blank and invalid.
    const malformed = await signUp({ username: '', email: '', password: '', agreement: false, locale: 'hello' });
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toEqual({
      error:
        "Validation failed: Username can't be blank, Email can't be blank, Email is invalid, Password can't be blank, Agreement must be accepted",
      details: {
        username: [{ error: 'ERR_BLANK', description: "can't be blank" }],
        email: [
          { error: 'ERR_BLANK', description: "can't be blank" },
          { error: 'ERR_INVALID', description: 'is invalid' },
        ],
        password: [{ error: 'ERR_BLANK', description: "can't be blank" }],
        agreement: [{ error: 'ERR_ACCEPTED', description: 'must be accepted' }],
      },
    });
    // With valid data the unknown locale is simply not kept; a known one is.
    for (const [username, locale, kept] of [
      ['lena', 'hello', null],
      ['mona', 'pt-BR', 'pt-BR'],
    ] as const) {
      const ok = await signUp({
        username,
        email: `${username}@example.test`,
        password: 'a long password',
        agreement: true,
        locale,
      });
      expect(ok.status).toBe(200);
      const user = await collection(core.db, users).findOne({ emailLower: `${username}@example.test` });
      expect(user?.locale ?? null).toBe(kept);
    }
    const shape = await signUp({
      username: 'bad-name!',
      email: 'carol@EXAMPLE.test',
      password: 'x'.repeat(73),
      agreement: true,
    });
    expect(((await shape.json()) as { details: unknown }).details).toEqual({
      username: [{ error: 'ERR_INVALID', description: 'is invalid' }],
      email: [{ error: 'ERR_TAKEN', description: 'has already been taken' }],
      password: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 72 characters)' }],
    });
    const long = await signUp({
      username: 'a'.repeat(31),
      email: 'long@example.test',
      password: 'a long password',
      agreement: true,
    });
    expect(((await long.json()) as { details: unknown }).details).toEqual({
      username: [{ error: 'ERR_TOO_LONG', description: 'is too long (maximum is 30 characters)' }],
    });
  });

  it('allows 5 sign-up requests per 30 minutes per IP address, then 429 with X-RateLimit headers', async () => {
    const ip = randomIp();
    for (let i = 0; i < 5; i++) {
      const res = await signUp(
        { username: `rate${i}`, email: `rate${i}@example.test`, password: 'short', agreement: true },
        { ip },
      );
      expect(res.status).toBe(422);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    const limited = await signUp(
      { username: 'rate5', email: 'rate5@example.test', password: 'a long password', agreement: true },
      { ip },
    );
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'Too many requests' });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = new Date(limited.headers.get('x-ratelimit-reset') as string);
    expect(reset.getTime()).toBeGreaterThan(Date.now());
    expect(reset.getTime()).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    // Another address is not affected.
    expect(
      (await signUp({ username: 'rate6', email: 'rate6@example.test', password: 'short', agreement: true })).status,
    ).toBe(422);
  });
});
