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
    const form =
      'fields_attributes[0][name]=a&fields_attributes[0][value]=1&fields_attributes[1][name]=b&fields_attributes[1][value]=2';
    const res = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', { token: alice.token, form });
    expect(res.status).toBe(200);
    expect(res.body.source.fields.map((f: { name: string; value: string }) => [f.name, f.value])).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });
});

describe('update_credentials attribution_domains (Mastodon 4.4, API level 3)', () => {
  it('stores them normalised, answers them in source and publishes them on the actor', async () => {
    const form = ['https://News.example', '*.blog.example', ' ', 'news.example']
      .map((d) => `attribution_domains[]=${encodeURIComponent(d)}`)
      .join('&');
    const res = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', { token: alice.token, form });
    expect(res.status).toBe(200);
    expect(res.body.source.attribution_domains).toEqual(['news.example', 'blog.example']);
    expect(
      (await call(server, 'GET', '/api/v1/accounts/verify_credentials', { token: alice.token })).body,
    ).toMatchObject({ source: { attribution_domains: ['news.example', 'blog.example'] } });
    const actor = await call(server, 'GET', `/users/${alice.account.username}`, {
      headers: { accept: 'application/activity+json' },
    });
    expect(actor.status).toBe(200);
    const doc = typeof actor.body === 'string' ? JSON.parse(actor.body) : actor.body;
    expect(doc.attributionDomains).toEqual(['news.example', 'blog.example']);
    expect(JSON.stringify(doc['@context'])).toContain('toot:attributionDomains');

    const cleared = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', {
      token: alice.token,
      json: { attribution_domains: [] },
    });
    expect(cleared.body.source.attribution_domains).toEqual([]);
  });

  it('refuses what is not a domain and more than 100 domains with 422', async () => {
    const bad = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', {
      token: alice.token,
      json: { attribution_domains: ['not a domain'] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toContain('Attribution domains is not a valid domain name');
    const many = Array.from({ length: 101 }, (_, i) => `site${i}.example`);
    const tooMany = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', {
      token: alice.token,
      json: { attribution_domains: many },
    });
    expect(tooMany.status).toBe(422);
  });
});

describe('update_credentials avatar_description and header_description (Mastodon 4.6)', () => {
  it('stores the alt texts, answers them on the Account entity, clears one with "" and refuses more than 1500 characters', async () => {
    const form = 'avatar_description=A%20red%20fox%20in%20snow&header_description=Mountains%20at%20dawn';
    const res = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', { token: alice.token, form });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      avatar_description: 'A red fox in snow',
      header_description: 'Mountains at dawn',
    });
    const seen = await call(server, 'GET', `/api/v1/accounts/${alice.account._id}`);
    expect(seen.body).toMatchObject({
      avatar_description: 'A red fox in snow',
      header_description: 'Mountains at dawn',
    });

    const cleared = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', {
      token: alice.token,
      json: { header_description: '' },
    });
    expect(cleared.body).toMatchObject({ avatar_description: 'A red fox in snow', header_description: '' });

    const long = await call(server, 'PATCH', '/api/v1/accounts/update_credentials', {
      token: alice.token,
      json: { avatar_description: 'x'.repeat(1501) },
    });
    expect(long.status).toBe(422);
    expect(long.body.error).toContain('Avatar description is too long (maximum is 1500 characters)');
    const after = await call(server, 'GET', '/api/v1/accounts/verify_credentials', { token: alice.token });
    expect(after.body.avatar_description).toBe('A red fox in snow');
  });
});

describe('GET /api/v1/accounts?id[]=', () => {
  it('answers each visible account once, skipping unknown, malformed and unconfirmed ones', async () => {
    const bob = await createTestUser(core);
    const pending = await createTestUser(core, { confirmed: false });
    const q = [
      String(bob.account._id),
      'x',
      String(alice.account._id),
      String(bob.account._id),
      '999999',
      String(pending.account._id),
    ]
      .map((id) => `id[]=${id}`)
      .join('&');
    const res = await call(server, 'GET', `/api/v1/accounts?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.map((a: { id: string }) => a.id)).toEqual([String(bob.account._id), String(alice.account._id)]);
  });

  it('counts distinct ids against the limit of 40', async () => {
    const same = Array.from({ length: 50 }, () => `id[]=${alice.account._id}`).join('&');
    expect((await call(server, 'GET', `/api/v1/accounts?${same}`)).status).toBe(200);
    const many = Array.from({ length: 41 }, (_, i) => `id[]=${5000 + i}`).join('&');
    expect((await call(server, 'GET', `/api/v1/accounts?${many}`)).status).toBe(422);
  });
});

describe('POST /api/v1/apps validation', () => {
  it('answers 422 (model validation, as Mastodon) when client_name or redirect_uris is missing', async () => {
    const noName = await call(server, 'POST', '/api/v1/apps', { form: 'redirect_uris=urn:ietf:wg:oauth:2.0:oob' });
    expect(noName.status).toBe(422);
    expect(noName.body.error).toMatch(/^Validation failed: /);
    const noRedirect = await call(server, 'POST', '/api/v1/apps', { json: { client_name: 'x' } });
    expect(noRedirect.status).toBe(422);
  });
});
