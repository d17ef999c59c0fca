// Accounts against the interface specification and Mastodon's parameter handling, over real HTTP.
import { testConfig } from '../../support/config.ts';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import type { Core } from '../../../services/core/context.ts';
import { call } from './helpers.ts';

let core: Core;
let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  ({ core } = await createTestCore(testConfig({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' })));
  server = await startTestServer(core);
  alice = await createTestUser(core);
});

afterAll(async () => {
  await server?.close();
  if (core) await closeTestCore(core);
});

describe('update_credentials fields_attributes', () => {
  it('accepts the Rails array-of-hashes form `fields_attributes[][name]=…&fields_attributes[][value]=…`', async () => {
    const form = [
      ['fields_attributes[][name]', 'Home'],
      ['fields_attributes[][value]', 'https://home.example'],
      ['fields_attributes[][name]', 'Pronouns'],
      ['fields_attributes[][value]', 'they/them'],
    ]
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');
    const res = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', { token: alice.token, form });
    expect(res.status).toBe(200);
    expect(res.body.source.fields).toEqual([
      { name: 'Home', value: 'https://home.example', verified_at: null },
      { name: 'Pronouns', value: 'they/them', verified_at: null },
    ]);
    expect(res.body.fields.map((f: { name: string }) => f.name)).toEqual(['Home', 'Pronouns']);
  });

  it('accepts the indexed form Mastodon.py and masto.js (multipart) send', async () => {
    const form = 'fields_attributes[0][name]=a&fields_attributes[0][value]=1&fields_attributes[1][name]=b&fields_attributes[1][value]=2';
    const res = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', { token: alice.token, form });
    expect(res.status).toBe(200);
    expect(res.body.source.fields.map((f: { name: string; value: string }) => [f.name, f.value])).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });
});
