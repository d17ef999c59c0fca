// GET and PATCH /api/v1/profile (Mastodon 4.6) over real HTTP: the Profile entity with the values
// as written (plain-text note and fields), images null until uploaded, the profile-tab settings;
// the scopes each method needs; the same validation as update_credentials.
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { png } from '../../support/mediaFiles.ts';

let api: TestApi;
let call: JsonClient;
let ola: TestUser;

beforeAll(async () => {
  api = await startTestApi({}, { mediaDir: true });
  call = api.call;
  ola = await createTestUser(api.core, { username: 'ola' });
});

afterAll(() => api?.close());

it('answers the own profile with the values as written and no images yet', async () => {
  const { status, body } = await call('GET', '/api/v1/profile', ola.token);
  expect(status).toBe(200);
  expect(body).toMatchObject({
    id: String(ola.account._id),
    avatar: null,
    avatar_static: null,
    avatar_description: '',
    header: null,
    header_static: null,
    show_media: true,
    show_media_replies: true,
    show_featured: true,
    attribution_domains: [],
  });
  expect(Object.keys(body).sort()).toEqual(
    [
      'id',
      'display_name',
      'note',
      'fields',
      'avatar',
      'avatar_static',
      'avatar_description',
      'header',
      'header_static',
      'header_description',
      'locked',
      'bot',
      'hide_collections',
      'discoverable',
      'indexable',
      'show_media',
      'show_media_replies',
      'show_featured',
      'attribution_domains',
    ].sort(),
  );
  expect((await call('GET', '/api/v1/profile')).status).toBe(401);
});

it('PATCH changes the profile and answers it, note and fields in plain text', async () => {
  const { status, body } = await call('PATCH', '/api/v1/profile', ola.token, {
    display_name: 'Ola N.',
    note: 'Gardens & <b>bees</b>',
    fields_attributes: [{ name: 'Site', value: 'https://example.org/' }],
    show_media: false,
    show_media_replies: 'false',
    show_featured: '0',
    avatar_description: 'A bee on a flower',
    attribution_domains: ['Example.org'],
  });
  expect(status).toBe(200);
  expect(body).toMatchObject({
    display_name: 'Ola N.',
    note: 'Gardens & <b>bees</b>',
    fields: [{ name: 'Site', value: 'https://example.org/', verified_at: null }],
    show_media: false,
    show_media_replies: false,
    show_featured: false,
    avatar_description: 'A bee on a flower',
    attribution_domains: ['example.org'],
  });
  // The account entity renders the same note as HTML.
  const account = await call('GET', '/api/v1/accounts/verify_credentials', ola.token);
  expect(account.body.note).toBe('<p>Gardens &amp; &lt;b&gt;bees&lt;/b&gt;</p>');
  expect((await call('GET', '/api/v1/profile', ola.token)).body.show_media).toBe(false);
});

it('PATCH takes an avatar upload; the profile then has its URLs', async () => {
  const form = new FormData();
  form.append('avatar', new Blob([new Uint8Array(await png(200, 200))], { type: 'image/png' }), 'me.png');
  const res = await fetch(`${api.server.url}/api/v1/profile`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${ola.token}` },
    body: form,
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { avatar: string | null; avatar_static: string | null };
  expect(body.avatar).toMatch(/\/system\/accounts\/avatars\//);
  expect(body.avatar_static).toEqual(expect.any(String));
});

it('refuses what update_credentials refuses, and a token without write scope', async () => {
  const tooLong = await call('PATCH', '/api/v1/profile', ola.token, { display_name: 'x'.repeat(31) });
  expect(tooLong.status).toBe(422);
  expect(tooLong.body.error).toMatch(/Display name/);
  const reader = await createTestUser(api.core, { scopes: ['read'] });
  expect((await call('GET', '/api/v1/profile', reader.token)).status).toBe(200);
  expect((await call('PATCH', '/api/v1/profile', reader.token, { display_name: 'no' })).status).toBe(403);
});
