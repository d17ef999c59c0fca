// POST /api/v1/statuses/:id/translate and /api/v1/instance/translation_languages against local stub
// servers speaking LibreTranslate's and DeepL's APIs: what is translated (content, CW, poll
// options), caching per status and language, who may translate what, and backend failures.
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { png } from '../../support/mediaFiles.ts';
import { deeplStub, libreTranslateStub, type TranslationStub } from '../../support/translationStubs.ts';

async function post(api: TestApi, user: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await api.call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  return res.body.id;
}

describe('translation through a LibreTranslate-style backend', () => {
  let stub: TranslationStub;
  let api: TestApi;
  let author: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    stub = await libreTranslateStub('libre-key');
    api = await startTestApi({
      TRANSLATION_BACKEND: 'libretranslate',
      TRANSLATION_ENDPOINT: stub.url,
      TRANSLATION_API_KEY: 'libre-key',
    });
    author = await createTestUser(api.core, { username: 'author' });
    stranger = await createTestUser(api.core, { username: 'stranger' });
  });
  afterAll(async () => {
    await api?.close();
    await stub?.close();
  });

  it('the instance says translation is on and which pairs exist', async () => {
    expect((await api.call('GET', '/api/v2/instance')).body.configuration.translation).toEqual({ enabled: true });
    const langs = (await api.call('GET', '/api/v1/instance/translation_languages')).body;
    expect(langs).toEqual({ und: ['de', 'en', 'fr'], en: ['de', 'fr'], de: ['en', 'fr'], fr: ['de', 'en'] });
  });

  it('translates content, content warning and poll options, once per status and language', async () => {
    const id = await post(api, author, {
      status: 'Hello world',
      spoiler_text: 'Greeting',
      language: 'en',
      poll: { options: ['Yes', 'No'], expires_in: 3600 },
    });
    const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, { lang: 'de' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: '[de] <p>Hello world</p>',
      spoiler_text: '[de] Greeting',
      poll: { id: expect.any(String), options: [{ title: '[de] Yes' }, { title: '[de] No' }] },
      media_attachments: [],
      detected_source_language: 'en',
      language: 'de',
      provider: 'LibreTranslate',
    });
    expect(stub.requests.at(-1)).toMatchObject({ source: 'en', target: 'de', format: 'html', api_key: 'libre-key' });
    const asked = stub.requests.length;
    const again = await api.call('POST', `/api/v1/statuses/${id}/translate?lang=de`, author.token);
    expect(again.body).toEqual(res.body);
    expect(stub.requests).toHaveLength(asked); // from the cache
    const fr = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, { lang: 'fr' });
    expect(fr.body.content).toBe('[fr] <p>Hello world</p>');
    expect(stub.requests).toHaveLength(asked + 1);
  });

  it('translates media descriptions', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await png(16, 16))], { type: 'image/png' }), 'a.png');
    form.append('description', 'A red square');
    const upload = await fetch(`${api.server.url}/api/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${author.token}` },
      body: form,
    });
    expect(upload.status).toBe(200);
    const media = (await upload.json()) as { id: string };
    const id = await post(api, author, { status: 'Look', media_ids: [media.id], language: 'en' });
    const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, { lang: 'fr' });
    expect(res.body.media_attachments).toEqual([{ id: media.id, description: '[fr] A red square' }]);
  });

  it('detects the language of statuses without one; defaults to the user locale', async () => {
    const id = await post(api, author, { status: 'Guten Tag' });
    await api.core.db.collection('statuses').updateOne({ uri: { $regex: id } }, { $set: { language: null } });
    const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      detected_source_language: 'de',
      language: 'en',
      content: '[en] <p>Guten Tag</p>',
    });
    expect(stub.requests.at(-1)).toMatchObject({ source: 'auto', target: 'en' });
  });

  it('refuses what the caller cannot see (404) and what is not public or unlisted (403)', async () => {
    const priv = await post(api, author, { status: 'Followers only', visibility: 'private', language: 'en' });
    const direct = await post(api, author, { status: '@stranger secret', visibility: 'direct', language: 'en' });
    const unlisted = await post(api, author, { status: 'Quiet', visibility: 'unlisted', language: 'en' });
    expect((await api.call('POST', `/api/v1/statuses/${priv}/translate`, stranger.token, { lang: 'de' })).status).toBe(
      404,
    );
    const own = await api.call('POST', `/api/v1/statuses/${priv}/translate`, author.token, { lang: 'de' });
    expect(own.status).toBe(403);
    expect(own.body).toEqual({ error: 'This action is not allowed' });
    expect(
      (await api.call('POST', `/api/v1/statuses/${direct}/translate`, stranger.token, { lang: 'de' })).status,
    ).toBe(403);
    expect(
      (await api.call('POST', `/api/v1/statuses/${unlisted}/translate`, stranger.token, { lang: 'de' })).status,
    ).toBe(200);
    expect((await api.call('POST', '/api/v1/statuses/12345/translate', stranger.token)).status).toBe(404);
    expect((await api.call('POST', '/api/v1/statuses/abc/translate', stranger.token)).status).toBe(404);
    const pub = await post(api, author, { status: 'Public', language: 'en' });
    expect((await api.call('POST', `/api/v1/statuses/${pub}/translate`)).status).toBe(401);
    // An unsupported pair.
    expect((await api.call('POST', `/api/v1/statuses/${pub}/translate`, stranger.token, { lang: 'xx' })).status).toBe(
      403,
    );
  });

  it("hostile input gets a 4xx in Mastodon's error format", async () => {
    const id = await post(api, author, { status: 'Target', language: 'en' });
    const bodies: unknown[] = [
      { lang: { $ne: 1 } },
      { lang: 'x'.repeat(5000) },
      { lang: '../../etc' },
      { lang: 'de\u0000' },
      { lang: 12 },
    ];
    for (const body of bodies) {
      const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, body);
      expect([body, res.status >= 400 && res.status < 500]).toEqual([body, true]);
      expect(res.body).toMatchObject({ error: expect.any(String) });
    }
  });

  it('answers 503 when the backend fails, without caching the failure', async () => {
    const id = await post(api, author, { status: 'Will fail', language: 'en' });
    stub.failWith = 500;
    try {
      const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, { lang: 'de' });
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual(expect.any(String));
    } finally {
      stub.failWith = null;
    }
    expect((await api.call('POST', `/api/v1/statuses/${id}/translate`, stranger.token, { lang: 'de' })).status).toBe(
      200,
    );
  });
});

describe('translation through a DeepL-style backend', () => {
  let stub: TranslationStub;
  let api: TestApi;
  let user: TestUser;

  beforeAll(async () => {
    stub = await deeplStub('deepl-secret');
    api = await startTestApi({
      TRANSLATION_BACKEND: 'deepl',
      TRANSLATION_ENDPOINT: stub.url,
      TRANSLATION_API_KEY: 'deepl-secret',
    });
    user = await createTestUser(api.core, { username: 'reader' });
  });
  afterAll(async () => {
    await api?.close();
    await stub?.close();
  });

  it('maps DeepL language codes and translates', async () => {
    const langs = (await api.call('GET', '/api/v1/instance/translation_languages')).body;
    expect(langs).toEqual({ und: ['de', 'en', 'fr'], de: ['en', 'fr'], en: ['de', 'fr'], fr: ['de', 'en'] });
    const id = await post(api, user, { status: 'Bonjour', language: 'fr' });
    const res = await api.call('POST', `/api/v1/statuses/${id}/translate`, user.token, { lang: 'de' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: '<DE> <p>Bonjour</p>',
      spoiler_text: '',
      media_attachments: [],
      detected_source_language: 'fr',
      language: 'de',
      provider: 'DeepL.com',
    });
    // Empty texts (no content warning) are not sent.
    expect(stub.requests.at(-1)).toEqual({ text: ['<p>Bonjour</p>'], source_lang: 'FR', target_lang: 'DE' });
  });

  it('a used-up quota (456) is a 503', async () => {
    const id = await post(api, user, { status: 'Encore', language: 'fr' });
    stub.failWith = 456;
    try {
      expect((await api.call('POST', `/api/v1/statuses/${id}/translate`, user.token, { lang: 'en' })).status).toBe(503);
    } finally {
      stub.failWith = null;
    }
  });
});

describe('translation without a backend', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('is off: no languages, and translating answers 404', async () => {
    const user = await createTestUser(api.core, { username: 'plain' });
    expect((await api.call('GET', '/api/v1/instance/translation_languages')).body).toEqual({});
    const id = await post(api, user, { status: 'Hello', language: 'en' });
    expect((await api.call('POST', `/api/v1/statuses/${id}/translate`, user.token, { lang: 'de' })).status).toBe(404);
  });
});
