// A real client library (masto.js) against a live server: it creates an app, obtains tokens (client
// credentials; a user token through the browser code flow with PKCE), reads and updates its account.
// masto runs in its own Node process (mastoFlow.ts), because it is ESM-only.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer } from '../../support/fixtures.ts';
import { runNodeForJson } from '../../support/processes.ts';

describe('masto.js client', () => {
  let api: TestApi;
  let core: Core;
  let server: TestServer;

  beforeAll(async () => {
    api = await startTestApi();
    ({ core, server } = api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('creates an app, obtains tokens, reads and updates its account', async () => {
    const alice = await createTestUser(core, { username: 'masto_alice', email: 'masto_alice@example.test' });
    const seen = await runNodeForJson('test/e2e/accounts/mastoFlow.ts', [
      server.url,
      'masto_alice@example.test',
      alice.password,
    ]);
    expect(seen.app).toEqual({ name: 'masto test', hasClientId: true, hasSecret: true });
    expect(seen.verifiedAppName).toBe('masto test');
    expect(seen.appTokenScope).toBe('read write');
    expect(seen.userTokenScope).toBe('read write follow push');
    expect(seen.me).toEqual({ id: String(alice.account._id), username: 'masto_alice', privacy: 'public', role: '-99' });
    expect(seen.updated).toEqual({
      displayName: 'Masto Alice',
      note: '<p>Written by masto.js</p>',
      locked: true,
      fields: [{ name: 'Client', value: 'masto', verifiedAt: null }],
      privacy: 'private',
    });
    expect(seen.fetchedDisplayName).toBe('Masto Alice');
    expect(seen.lookedUpId).toBe(String(alice.account._id));
    expect(seen.missing).toBe(404);
  });
});
