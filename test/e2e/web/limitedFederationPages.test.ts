// The public pages in limited federation mode (LIMITED_FEDERATION_MODE, Mastodon's whitelist
// mode), as a logged-out visitor and another server fetch them: remote profiles show only for
// allowed servers, local pages still show, and the ActivityPub JSON at the same paths needs a
// signed request (Mastodon forces authorized fetch in this mode).
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { createRemoteAccount } from '../../support/remoteAccounts.ts';
import { createDomainAllow } from '../../../services/core/moderation/domainAllows.ts';

let core: Core;
let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  ({ core } = await createTestCore(testConfig({ LIMITED_FEDERATION_MODE: 'true' })));
  server = await startTestServer(core);
  alice = await createTestUser(core);
  await createDomainAllow(core, 'friends.example', null);
  await createRemoteAccount(core, 'https://friends.example', 'fran');
  await createRemoteAccount(core, 'https://stranger.example', 'stan');
});

afterAll(async () => {
  await server?.close();
  if (core) await closeTestCore(core);
});

it('shows local profiles and those of allowed servers only', async () => {
  const local = await fetch(`${server.url}/@${alice.account.username}`);
  expect(local.status).toBe(200);
  expect(await local.text()).toContain(alice.account.username);
  expect((await fetch(`${server.url}/@fran@friends.example`)).status).toBe(200);
  expect((await fetch(`${server.url}/@stan@stranger.example`)).status).toBe(404);
});

it('answers the ActivityPub JSON of the same pages only to signed requests', async () => {
  const json = await fetch(`${server.url}/@${alice.account.username}`, {
    headers: { accept: 'application/activity+json' },
  });
  expect(json.status).toBe(401);
  const html = await fetch(`${server.url}/@${alice.account.username}`, { headers: { accept: 'text/html' } });
  expect(html.status).toBe(200);
});
