// A token's last use is recorded as the request is authenticated, at most once an hour (Doorkeeper's
// last_used_at, shown on the authorized apps page), without holding up the request.
import { hashSecret } from '../../../services/core/auth/tokens.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accessTokens } from '../../../services/core/model/oauth.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

it('records the first use of a token, and not again within the hour', async () => {
  const { token } = await createTestUser(api.core);
  const stored = () => collection(api.core.db, accessTokens).findOne({ tokenHash: hashSecret(token) });
  expect((await stored())?.lastUsedAt).toBeNull();

  const before = Date.now();
  expect((await api.call('GET', '/api/v1/accounts/verify_credentials', token)).status).toBe(200);
  const first = await eventually(async () => (await stored())?.lastUsedAt ?? undefined, 10_000, 'last use recorded');
  expect(first.getTime()).toBeGreaterThanOrEqual(before - 1000);

  // A later request within the hour leaves it: it is bookkeeping at hourly resolution.
  expect((await api.call('GET', '/api/v1/accounts/verify_credentials', token)).status).toBe(200);
  expect((await api.call('GET', '/api/v1/accounts/verify_credentials', token)).status).toBe(200);
  expect((await stored())?.lastUsedAt?.getTime()).toBe(first.getTime());
});
