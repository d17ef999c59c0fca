// Polls against Mastodon's behaviour, over real HTTP: a local poll counts its voters whether it is
// single or multiple choice (PostStatusService creates it with voters_count 0), `expires_in` may
// arrive as a string, and a poll of a non-public status stays hidden from strangers.
import { testConfig } from '../../support/config.ts';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import type { Core } from '../../../services/core/context.ts';
import { call } from './helpers.ts';

let core: Core;
let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  ({ core } = await createTestCore(testConfig()));
  server = await startTestServer(core);
  [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
});

afterAll(async () => {
  await server?.close();
  if (core) await closeTestCore(core);
});

it('a single-choice poll has voters_count 0, then the number of voters', async () => {
  const posted = await call(server, 'POST', '/api/v1/statuses', {
    token: alice.token,
    json: { status: 'pick', poll: { options: ['a', 'b'], expires_in: '3600' } },
  });
  expect(posted.status).toBe(200);
  expect(posted.body.poll).toMatchObject({ multiple: false, votes_count: 0, voters_count: 0 });
  const voted = await call(server, 'POST', `/api/v1/polls/${posted.body.poll.id}/votes`, {
    token: bob.token,
    form: 'choices[]=1',
  });
  expect(voted.status).toBe(200);
  expect(voted.body).toMatchObject({ votes_count: 1, voters_count: 1, voted: true, own_votes: [1] });
});

it('a poll of a followers-only status is 404 for strangers and anonymous callers', async () => {
  const posted = await call(server, 'POST', '/api/v1/statuses', {
    token: alice.token,
    form: 'status=secret&visibility=private&poll[options][]=x&poll[options][]=y&poll[expires_in]=600',
  });
  const path = `/api/v1/polls/${posted.body.poll.id}`;
  expect((await call(server, 'GET', path)).status).toBe(404);
  expect((await call(server, 'GET', path, { token: bob.token })).status).toBe(404);
  expect((await call(server, 'GET', path, { token: alice.token })).status).toBe(200);
});

it('voting without choices is a missing parameter (400), as Mastodon requires `choices`', async () => {
  const posted = await call(server, 'POST', '/api/v1/statuses', {
    token: alice.token,
    json: { status: 'vote?', poll: { options: ['a', 'b'], expires_in: 600 } },
  });
  const res = await call(server, 'POST', `/api/v1/polls/${posted.body.poll.id}/votes`, { token: bob.token, json: {} });
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('param is missing or the value is empty: choices');
});
