import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestApp, createTestUser, type TestServer } from '../../support/fixtures.ts';
import { presentAccount } from '../../../services/core/entities/account.ts';

describe('test fixtures and the account presenter', () => {
  let api: TestApi;
  let core: Core;
  let server: TestServer;
  let published: OutboxEvent[];

  beforeAll(async () => {
    api = await startTestApi({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' });
    ({ core, published, server } = api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('creates a confirmed user with a working token, an RSA key pair and an AccountCreated event', async () => {
    const { account, user, token, app } = await createTestUser(core, { username: 'alice' });
    expect(account.publicKeyPem).toMatch(/BEGIN PUBLIC KEY/);
    expect(account.privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    expect(user.confirmedAt).not.toBeNull();
    expect(app.scopes).toEqual(['read', 'write', 'follow', 'push']);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(published.some((e) => e.type === 'AccountCreated' && e.payload.accountId === String(account._id))).toBe(
      true,
    );
  });

  it('renders the Account entity in Mastodon form', async () => {
    const { account } = await createTestUser(core, { username: 'bob', role: 'Moderator' });
    const entity = await presentAccount(core, account);
    expect(entity).toMatchObject({
      id: String(account._id),
      username: 'bob',
      acct: 'bob',
      uri: 'https://social.example/users/bob',
      url: 'https://social.example/@bob',
      display_name: '',
      note: '',
      locked: false,
      bot: false,
      group: false,
      fields: [],
      emojis: [],
      statuses_count: 0,
      followers_count: 0,
      following_count: 0,
      last_status_at: null,
      roles: [{ id: expect.any(String), name: 'Moderator', color: '' }],
    });
    expect(entity.created_at).toMatch(/^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(entity.avatar).toBe(`${core.config.baseUrl}/avatars/original/missing.png`);
    expect(entity.header).toBe(`${core.config.baseUrl}/headers/original/missing.png`);
  });

  it('creates app tokens and a listening server', async () => {
    const { token, clientSecret } = await createTestApp(core);
    expect(token).not.toBe(clientSecret);
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
  });
});
