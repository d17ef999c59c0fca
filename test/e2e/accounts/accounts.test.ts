// The accounts API over real HTTP: reading accounts (by id, several ids, lookup), the own account
// (verify/update credentials with every attribute, avatar and header uploads processed by sharp),
// scope checks, and the account rows of the specification's Errors table.
import sharp from 'sharp';
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { setDisabled } from '../../../services/core/users/moderation.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { requester, type Requester } from '../../support/http.ts';

describe('accounts API', () => {
  let api: TestApi;
  let core: Core;
  let server: TestServer;
  let call: Requester;
  let alice: TestUser;
  let bob: TestUser;
  let events: OutboxEvent[];

  async function patchForm(token: string, form: FormData | URLSearchParams): Promise<Response> {
    return fetch(`${server.url}/api/v1/accounts/update_credentials`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
  }

  /** Fetches a file URL of ours from the test server (URLs carry the configured base URL). */
  async function fetchOwn(url: string): Promise<Response> {
    const u = new URL(url);
    return fetch(`${server.url}${u.pathname}`);
  }

  beforeAll(async () => {
    api = await startTestApi({}, { mediaDir: true });
    ({ core, server, published: events } = api);
    call = requester(server.url);
    alice = await createTestUser(core, { username: 'alice' });
    bob = await createTestUser(core, { username: 'bob', role: 'Moderator' });
  });

  afterAll(() => api?.close());

  it('GET /api/v1/accounts/:id/identity_proofs answers [] (deprecated in Mastodon, still called)', async () => {
    const res = await call('GET', `/api/v1/accounts/${bob.account._id}/identity_proofs`, alice.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
    expect((await call('GET', '/api/v1/accounts/999999999/identity_proofs', alice.token)).status).toBe(404);
    expect((await call('GET', `/api/v1/accounts/${bob.account._id}/identity_proofs`)).status).toBe(401);
  });

  it('reads an account by id, without authentication too', async () => {
    const res = await call('GET', `/api/v1/accounts/${bob.account._id}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      id: String(bob.account._id),
      username: 'bob',
      acct: 'bob',
      roles: [{ name: 'Moderator', color: '' }],
    });
    expect(Object.keys(body).sort()).toEqual(
      [
        'id',
        'username',
        'acct',
        'url',
        'uri',
        'display_name',
        'note',
        'avatar',
        'avatar_static',
        'avatar_description',
        'header',
        'header_static',
        'header_description',
        'locked',
        'fields',
        'emojis',
        'bot',
        'group',
        'discoverable',
        'indexable',
        'noindex',
        'hide_collections',
        'created_at',
        'last_status_at',
        'statuses_count',
        'followers_count',
        'following_count',
        'roles',
        // Mastodon 4.6.
        'feature_approval',
        'show_media',
        'show_media_replies',
        'show_featured',
      ].sort(),
    );
    expect((await call('GET', '/api/v1/accounts/999999')).status).toBe(404);
    expect(await (await call('GET', '/api/v1/accounts/not-a-number')).json()).toEqual({ error: 'Record not found' });
  });

  it('reads several accounts, skipping unknown and hidden ones', async () => {
    const pending = await createTestUser(core, { confirmed: false });
    const unapproved = await createTestUser(core, { approved: false });
    const res = await call(
      'GET',
      `/api/v1/accounts?id[]=${bob.account._id}&id[]=424242&id[]=${pending.account._id}&id[]=${unapproved.account._id}&id[]=${alice.account._id}`,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }[]).map((a) => a.id)).toEqual([
      String(bob.account._id),
      String(alice.account._id),
    ]);
    // Errors table: unconfirmed or unapproved accounts are not returned, except through lookup.
    expect((await call('GET', `/api/v1/accounts/${pending.account._id}`)).status).toBe(404);
    expect((await call('GET', `/api/v1/accounts/${unapproved.account._id}`)).status).toBe(404);
    expect((await call('GET', `/api/v1/accounts/lookup?acct=${pending.account.username}`)).status).toBe(200);
    expect((await call('GET', `/api/v1/accounts/lookup?acct=${unapproved.account.username}`)).status).toBe(200);
  });

  it('looks accounts up by acct in its spellings', async () => {
    for (const acct of [
      'alice',
      '@alice',
      'ALICE',
      `alice@${core.config.localDomain}`,
      `@alice@${core.config.localDomain}`,
    ]) {
      const res = await call('GET', `/api/v1/accounts/lookup?acct=${encodeURIComponent(acct)}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(String(alice.account._id));
    }
    expect((await call('GET', '/api/v1/accounts/lookup?acct=alice@elsewhere.example')).status).toBe(404);
    expect((await call('GET', '/api/v1/accounts/lookup?acct=nobody')).status).toBe(404);
    expect((await call('GET', '/api/v1/accounts/lookup')).status).toBe(400);
  });

  it('verify_credentials gives the credential account with source and role', async () => {
    const res = await call('GET', '/api/v1/accounts/verify_credentials', bob.token);
    expect(res.status).toBe(200);
    const me = (await res.json()) as Record<string, unknown>;
    expect(me.source).toEqual({
      note: '',
      fields: [],
      privacy: 'public',
      sensitive: false,
      language: '',
      quote_policy: 'public',
      follow_requests_count: 0,
      hide_collections: false,
      discoverable: false,
      indexable: false,
      attribution_domains: [],
    });
    expect(me.role).toEqual({
      id: expect.any(String),
      name: 'Moderator',
      color: '',
      permissions: String(0x8 | 0x4 | 0x400 | 0x10 | 0x100),
      highlighted: true,
    });
    expect((await call('GET', '/api/v1/accounts/verify_credentials')).status).toBe(401);
    expect((await call('GET', '/api/v1/accounts/verify_credentials', 'bogus')).status).toBe(401);
  });

  it('updates every profile attribute and the posting defaults, and emits AccountUpdated', async () => {
    const res = await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, {
      display_name: 'Alice in Chains',
      note: 'Hello <b>world</b>, see https://example.com/about and @bob\n\nSecond paragraph',
      locked: true,
      bot: 'true',
      discoverable: '1',
      indexable: true,
      hide_collections: true,
      fields_attributes: {
        '0': { name: 'Site', value: 'https://alice.example' },
        '1': { name: 'Pronouns', value: 'she/her' },
      },
      source: { privacy: 'unlisted', sensitive: true, language: 'de' },
    });
    expect(res.status).toBe(200);
    const me = (await res.json()) as Record<string, unknown> & {
      source: Record<string, unknown>;
      fields: { name: string; value: string; verified_at: null }[];
    };
    expect(me).toMatchObject({
      display_name: 'Alice in Chains',
      locked: true,
      bot: true,
      discoverable: true,
      indexable: true,
      hide_collections: true,
    });
    expect(me.note).toContain('Hello &lt;b&gt;world&lt;/b&gt;');
    expect(me.note).not.toContain('<b>');
    expect(me.note).toContain('href="https://example.com/about"');
    expect(me.note).toContain(`href="${bob.account.url}"`);
    expect(me.note).toMatch(/^<p>.*<\/p><p>Second paragraph<\/p>$/);
    expect(me.fields[0]).toMatchObject({ name: 'Site', verified_at: null });
    expect(me.fields[0].value).toContain('rel="nofollow noopener me"');
    expect(me.fields[1]).toEqual({ name: 'Pronouns', value: 'she/her', verified_at: null });
    expect(me.source).toMatchObject({
      privacy: 'unlisted',
      sensitive: true,
      language: 'de',
      note: 'Hello <b>world</b>, see https://example.com/about and @bob\n\nSecond paragraph',
      fields: [
        { name: 'Site', value: 'https://alice.example', verified_at: null },
        { name: 'Pronouns', value: 'she/her', verified_at: null },
      ],
    });
    const updated = events.filter(
      (e) => e.type === 'AccountUpdated' && e.payload.accountId === String(alice.account._id),
    );
    expect(updated.length).toBe(1);
    expect(updated[0].payload.changed).toEqual(
      expect.arrayContaining(['display_name', 'note', 'fields', 'locked', 'source', 'hide_collections']),
    );
    // The public view carries the changes too.
    const pub = (await (await call('GET', `/api/v1/accounts/${alice.account._id}`)).json()) as Record<string, unknown>;
    expect(pub).toMatchObject({ display_name: 'Alice in Chains', locked: true });
    expect(pub).not.toHaveProperty('source');
  });

  it('takes form-encoded indexed fields, drops empty ones and replaces the whole set', async () => {
    const form = new URLSearchParams();
    form.append('fields_attributes[0][name]', 'Only');
    form.append('fields_attributes[0][value]', 'one');
    form.append('fields_attributes[1][name]', '');
    form.append('fields_attributes[1][value]', '');
    form.append('locked', '0');
    const res = await patchForm(alice.token, form);
    expect(res.status).toBe(200);
    const me = (await res.json()) as { fields: unknown[]; locked: boolean };
    expect(me.fields).toEqual([{ name: 'Only', value: 'one', verified_at: null }]);
    expect(me.locked).toBe(false);
  });

  it('ignores a fields_attributes that is neither a list nor a hash (200, fields kept), as Mastodon', async () => {
    const before = (await (await call('GET', '/api/v1/accounts/verify_credentials', alice.token)).json()) as {
      fields: unknown[];
    };
    expect(before.fields.length).toBeGreaterThan(0);
    // A client library sends the string "undefined" for an unset value, as a form or as JSON.
    const form = await patchForm(alice.token, new URLSearchParams('fields_attributes=undefined&display_name=Kept'));
    expect(form.status).toBe(200);
    const me = (await form.json()) as { fields: unknown[]; display_name: string };
    expect(me.fields).toEqual(before.fields);
    expect(me.display_name).toBe('Kept');
    for (const value of ['undefined', 3, true, null]) {
      const json = await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, {
        fields_attributes: value,
      });
      expect(json.status).toBe(200);
      expect(((await json.json()) as { fields: unknown[] }).fields).toEqual(before.fields);
    }
  });

  it('accepts an empty source argument (not a 400)', async () => {
    const json = await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, { source: '' });
    expect(json.status).toBe(200);
    const form = await patchForm(alice.token, new URLSearchParams('source='));
    expect(form.status).toBe(200);
    const empty = await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, { source: {} });
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as { source: { privacy: string } }).source.privacy).toBe('unlisted');
  });

  it('enforces the limits with 422 Validation failed', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ note: 'x'.repeat(501) }, 'Validation failed: Note is too long (maximum is 500 characters)'],
      [{ display_name: 'y'.repeat(31) }, 'Validation failed: Display name is too long (maximum is 30 characters)'],
      [
        { fields_attributes: [1, 2, 3, 4, 5].map((i) => ({ name: `n${i}`, value: 'v' })) },
        'Validation failed: Fields is too long (maximum is 4 fields)',
      ],
      [
        { fields_attributes: [{ name: 'n', value: 'v'.repeat(256) }] },
        'Validation failed: Fields name and value can be at most 255 characters',
      ],
      [{ source: { privacy: 'everyone' } }, 'Validation failed: Setting default privacy is not included in the list'],
    ];
    for (const [body, error] of cases) {
      const res = await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, body);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({ error });
    }
    // 500 characters exactly is fine.
    expect(
      (await call('PATCH', '/api/v1/accounts/update_credentials', alice.token, { note: 'z'.repeat(500) })).status,
    ).toBe(200);
  });

  it('processes avatar and header uploads with sharp and serves them', async () => {
    const big = await sharp({ create: { width: 900, height: 600, channels: 3, background: '#ff0000' } })
      .jpeg()
      .withMetadata({ exif: { IFD0: { Copyright: 'secret camera owner' } } })
      .toBuffer();
    const form = new FormData();
    form.append('avatar', new Blob([new Uint8Array(big)], { type: 'image/jpeg' }), 'me.jpg');
    form.append('header', new Blob([new Uint8Array(big)], { type: 'image/jpeg' }), 'header.jpg');
    form.append('display_name', 'Pictured');
    const res = await patchForm(alice.token, form);
    expect(res.status).toBe(200);
    const me = (await res.json()) as { avatar: string; avatar_static: string; header: string; display_name: string };
    expect(me.display_name).toBe('Pictured');
    expect(me.avatar).not.toContain('missing.png');
    expect(me.avatar_static).toBe(me.avatar);
    const avatar = await fetchOwn(me.avatar);
    expect(avatar.status).toBe(200);
    const avatarMeta = await sharp(Buffer.from(await avatar.arrayBuffer())).metadata();
    expect([avatarMeta.width, avatarMeta.height]).toEqual([400, 400]);
    expect(avatarMeta.exif).toBeUndefined();
    const header = await sharp(Buffer.from(await (await fetchOwn(me.header)).arrayBuffer())).metadata();
    expect([header.width, header.height]).toEqual([1500, 500]);

    const notImage = new FormData();
    notImage.append('avatar', new Blob(['hello'], { type: 'image/png' }), 'x.png');
    const bad = await patchForm(alice.token, notImage);
    expect(bad.status).toBe(422);

    const del = await call('DELETE', '/api/v1/profile/avatar', alice.token);
    expect(del.status).toBe(200);
    const after = (await del.json()) as { avatar: string };
    expect(after.avatar).toBe(`${core.config.baseUrl}/avatars/original/missing.png`);
    expect((await fetchOwn(me.avatar)).status).toBe(404);
    const placeholder = await fetchOwn(after.avatar);
    expect(placeholder.status).toBe(200);
    expect(placeholder.headers.get('content-type')).toBe('image/png');
  });

  it('checks scopes: a read-only token cannot update, a write-only token cannot read credentials', async () => {
    const reader = await createTestUser(core, { scopes: ['read'] });
    const patch = await call('PATCH', '/api/v1/accounts/update_credentials', reader.token, { display_name: 'x' });
    expect(patch.status).toBe(403);
    expect(await patch.json()).toEqual({ error: 'This action is outside the authorized scopes' });
    const writer = await createTestUser(core, { scopes: ['write:accounts'] });
    expect(
      (await call('PATCH', '/api/v1/accounts/update_credentials', writer.token, { display_name: 'ok' })).status,
    ).toBe(200);
    expect((await call('GET', '/api/v1/accounts/verify_credentials', writer.token)).status).toBe(403);
    const granular = await createTestUser(core, { scopes: ['read:accounts'] });
    expect((await call('GET', '/api/v1/accounts/verify_credentials', granular.token)).status).toBe(200);
  });

  it('refuses disabled logins', async () => {
    const carl = await createTestUser(core);
    await setDisabled(core, carl.user, true, null);
    const res = await call('GET', '/api/v1/accounts/verify_credentials', carl.token);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'Your login is currently disabled' });
  });
});
