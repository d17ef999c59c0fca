// `allowed_mentions` on POST /api/v1/statuses (Mastodon 4.5): a client lists the accounts a post
// may reach; a text mentioning anyone else is refused with 422, the error Mastodon gives and the
// unexpected accounts as Account entities, and nothing is posted.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';

let api: TestApi;
let core: Core;
let alice: TestUser, bob: TestUser, carol: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  [alice, bob, carol] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
});

afterAll(async () => {
  await api?.close();
});

const posted = () => collection(core.db, statuses).countDocuments({ accountId: alice.account._id });

test('a mention outside allowed_mentions is refused with 422 and the unexpected accounts', async () => {
  const text = `@${bob.account.username} @${carol.account.username} hello`;
  const res = await call('POST', '/api/v1/statuses', alice.token, {
    status: text,
    allowed_mentions: [String(bob.account._id)],
  });
  expect(res.status).toBe(422);
  expect(res.body.error).toBe('Post would be sent to unexpected accounts');
  expect(res.body.unexpected_accounts).toHaveLength(1);
  expect(res.body.unexpected_accounts[0]).toMatchObject({
    id: String(carol.account._id),
    username: carol.account.username,
    acct: carol.account.username,
  });
  expect(await posted()).toBe(0);

  // An empty list allows nobody; ids that are not ids allow nobody either.
  const none = await call('POST', '/api/v1/statuses', alice.token, { status: text, allowed_mentions: [] });
  expect(none.status).toBe(422);
  expect((none.body.unexpected_accounts as { id: string }[]).map((a) => a.id).sort()).toEqual(
    [bob, carol].map((u) => String(u.account._id)).sort(),
  );
  const junk = await call('POST', '/api/v1/statuses', alice.token, { status: text, allowed_mentions: ['x'] });
  expect(junk.status).toBe(422);
  expect(await posted()).toBe(0);
});

test('with every mention allowed (or without the field) the post goes through', async () => {
  const text = `@${bob.account.username} @${carol.account.username} hello`;
  const allowed = await call('POST', '/api/v1/statuses', alice.token, {
    status: text,
    allowed_mentions: [String(carol.account._id), String(bob.account._id), '12345'],
  });
  expect(allowed.status).toBe(200);
  expect((allowed.body.mentions as { id: string }[]).map((m) => m.id).sort()).toEqual(
    [bob, carol].map((u) => String(u.account._id)).sort(),
  );
  // No mention at all: nothing unexpected.
  const plain = await call('POST', '/api/v1/statuses', alice.token, { status: 'no one', allowed_mentions: [] });
  expect(plain.status).toBe(200);
  const without = await call('POST', '/api/v1/statuses', alice.token, { status: text });
  expect(without.status).toBe(200);
  // As a form, the way many clients post (allowed_mentions[]=id).
  const form = new URLSearchParams({ status: text });
  form.append('allowed_mentions[]', String(bob.account._id));
  const res = await fetch(`${api.server.url}/api/v1/statuses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}` },
    body: form,
  });
  expect(res.status).toBe(422);
  const body = (await res.json()) as { unexpected_accounts: { id: string }[] };
  expect(body.unexpected_accounts.map((a) => a.id)).toEqual([String(carol.account._id)]);
  expect(await posted()).toBe(3);
});
