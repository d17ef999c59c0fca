// Endpoints Mastodon removed answer 404 (specification, "Removed endpoints"), with and without a
// token, whatever the method: v1 search, the status card, the direct timeline, v2 mutes, and the
// OStatus-era Salmon and PubSubHubbub endpoints.
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';

const REMOVED: [string, string][] = [
  ['GET', '/api/v1/search?q=hello'],
  ['GET', '/api/v1/statuses/1/card'],
  ['GET', '/api/v1/timelines/direct'],
  ['GET', '/api/v2/mutes'],
  ['POST', '/api/salmon/1'],
  ['POST', '/api/push'],
  ['GET', '/api/push'],
  ['POST', '/api/subscriptions/1'],
  ['GET', '/api/subscriptions/1?hub.mode=subscribe'],
];

describe('removed endpoints', () => {
  let api: TestApi;
  let token: string;
  beforeAll(async () => {
    api = await startTestApi();
    ({ token } = await createTestUser(api.core, { username: 'someone' }));
  });
  afterAll(() => api?.close());

  it.each(REMOVED)('%s %s answers 404', async (method, path) => {
    const id = (await api.call('POST', '/api/v1/statuses', token, { status: 'x' })).body.id as string;
    const real = path.replace('/statuses/1/', `/statuses/${id}/`);
    for (const t of [null, token]) {
      const res = await api.call(method, real, t, method === 'POST' ? {} : undefined);
      expect([method, real, res.status]).toEqual([method, real, 404]);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  });
});
