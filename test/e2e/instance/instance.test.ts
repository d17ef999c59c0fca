// The instance documents over real HTTP: configuration clients rely on, registration state that
// follows the server setting and OMNIAUTH_ONLY, live statistics, and the streaming URL.
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { setRegistrationsMode } from '../../../services/core/settings/settings.ts';
import type { Core } from '../../../services/core/context.ts';
import { invalidateInstanceCache } from '../../../services/core/instance/cache.ts';

describe('instance', () => {
  let api: TestApi;
  let core: Core;
  let call: JsonClient;

  beforeAll(async () => {
    api = await startTestApi({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' });
    ({ core, call } = api);
  });
  afterAll(() => api?.close());

  it('GET /api/v2/instance describes the server and its limits, without authentication', async () => {
    const { status, body, headers } = await call('GET', '/api/v2/instance');
    expect(status).toBe(200);
    expect(headers.get('access-control-allow-origin')).toBe('*');
    expect(body.domain).toBe('social.example');
    expect(body.version).toMatch(/^4\.\d+\.\d+/);
    expect(body.api_versions).toEqual({ mastodon: expect.any(Number) });
    expect(body.configuration.statuses).toEqual({
      max_characters: 500,
      max_media_attachments: 4,
      characters_reserved_per_url: 23,
    });
    expect(body.configuration.polls).toEqual({
      max_options: 4,
      max_characters_per_option: 50,
      min_expiration: 300,
      max_expiration: 2629746,
    });
    expect(body.configuration.accounts.max_featured_tags).toBe(10);
    expect(body.configuration.media_attachments.supported_mime_types).toContain('image/png');
    expect(body.configuration.urls.streaming).toBe('wss://social.example');
    expect(body.registrations).toMatchObject({ enabled: true, approval_required: false });
    expect(body.contact).toEqual({ email: '', account: null });
    expect(body.rules).toEqual([]);
  });

  it('follows the registrations setting', async () => {
    await setRegistrationsMode(core, 'approved');
    await core.redis.del('instance:stats');
    expect((await call('GET', '/api/v2/instance')).body.registrations).toMatchObject({
      enabled: true,
      approval_required: true,
    });
    expect((await call('GET', '/api/v1/instance')).body).toMatchObject({
      registrations: true,
      approval_required: true,
    });
    await setRegistrationsMode(core, 'closed');
    expect((await call('GET', '/api/v2/instance')).body.registrations.enabled).toBe(false);
    expect((await call('GET', '/api/v1/instance')).body.registrations).toBe(false);
    await setRegistrationsMode(core, 'open');
  });

  it('GET /api/v1/instance counts confirmed users and local statuses, and is marked deprecated', async () => {
    await createTestUser(core, { username: 'counted' });
    await createTestUser(core, { username: 'unconfirmed', confirmed: false });
    await core.redis.del('instance:stats');
    await invalidateInstanceCache(core); // the documents are cached for minutes
    const { status, body, headers } = await call('GET', '/api/v1/instance');
    expect(status).toBe(200);
    expect(headers.get('deprecation')).toBeTruthy();
    expect(body.uri).toBe('social.example');
    expect(body.stats).toEqual({ user_count: 1, status_count: 0, domain_count: 0 });
    expect(body.urls.streaming_api).toBe('wss://social.example');
  });

  it('custom emojis are an empty list', async () => {
    const { status, body } = await call('GET', '/api/v1/custom_emojis');
    expect(status).toBe(200);
    expect(body).toEqual([]);
  });
});

describe('instance with OMNIAUTH_ONLY and a separate streaming host', () => {
  let api: TestApi;
  let call: JsonClient;
  beforeAll(async () => {
    api = await startTestApi({ OMNIAUTH_ONLY: 'true', STREAMING_API_BASE_URL: 'wss://streaming.social.example' });
    ({ call } = api);
  });
  afterAll(() => api?.close());

  it('reports registrations closed and the configured streaming URL', async () => {
    const { body } = await call('GET', '/api/v2/instance');
    expect(body.registrations.enabled).toBe(false);
    expect(body.configuration.urls.streaming).toBe('wss://streaming.social.example');
  });
});

describe('streaming requests reaching the API server', () => {
  it('are redirected to STREAMING_API_BASE_URL with their path and query', async () => {
    const api = await startTestApi({ STREAMING_API_BASE_URL: 'wss://streaming.social.example' });
    try {
      const res = await fetch(`${api.server.url}/api/v1/streaming/public?stream=public`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(
        'https://streaming.social.example/api/v1/streaming/public?stream=public',
      );
    } finally {
      await api.close();
    }
  });

  it('answer 404 when the streaming server shares the web address (a proxy routes them)', async () => {
    const api = await startTestApi({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' });
    try {
      const res = await fetch(`${api.server.url}/api/v1/streaming?stream=user`, { redirect: 'manual' });
      expect(res.status).toBe(404);
    } finally {
      await api.close();
    }
  });
});
