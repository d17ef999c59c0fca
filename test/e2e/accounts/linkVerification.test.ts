// Profile field links verified as Mastodon does it, end to end: a profile edit through the API
// emits AccountUpdated, the link-previews pipeline fetches each field's page from a local HTTP
// server and marks the field verified when the page links back with rel="me" (or its first rel="me"
// link redirects to the profile); a page without the link, a link to someone else and a value that
// is not a URL stay unverified, and a verification ends when the value changes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../../../services/core/context.ts';
import { runLinkPreviewsPipeline } from '../../../pipelines/link-previews/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let rita: TestUser;
let site: http.Server;
let base: string;
const fetched: string[] = [];

beforeAll(async () => {
  api = await startTestApi({ ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32', FEDERATION_ALLOW_HTTP: 'true' });
  core = api.core;
  rita = await createTestUser(core, { username: 'rita' });
  site = http.createServer((req, res) => {
    fetched.push(req.url ?? '');
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    switch (req.url) {
      case '/home':
        return html(`<html><head><link rel="me" href="${rita.account.url}"></head><body>Rita</body></html>`);
      case '/blog':
        return html(`<p><a rel="me" href="${base}/go">my profile</a></p>`);
      case '/go':
        res.writeHead(301, { location: rita.account.url });
        return res.end();
      case '/nolink':
        return html(`<p><a href="${rita.account.url}">no rel</a></p>`);
      case '/other':
        return html(`<a rel="me" href="https://elsewhere.example/@rita">someone else</a>`);
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  pipeline = await runLinkPreviewsPipeline(core, consumerTuning);
}, 120_000);

afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});

type Field = { name: string; value: string; verified_at: string | null };

async function fields(): Promise<Field[]> {
  const res = await api.call('GET', '/api/v1/accounts/verify_credentials', rita.token);
  expect(res.status).toBe(200);
  return res.body.fields as Field[];
}

async function setFields(list: [string, string][]): Promise<void> {
  const body = { fields_attributes: list.map(([name, value]) => ({ name, value })) };
  const res = await api.call('PATCH', '/api/v1/accounts/update_credentials', rita.token, body);
  expect(res.status).toBe(200);
}

test('a rel="me" link back, or a rel="me" link redirecting to the profile, verifies the field', async () => {
  await setFields([
    ['Home', `${base}/home`],
    ['Blog', `${base}/blog`],
    ['Plain', `${base}/nolink`],
    ['Other', `${base}/other`],
  ]);
  await eventually(
    async () => (await fields()).filter((f) => f.verified_at !== null).length === 2,
    60_000,
    'two verified fields',
  );
  // Every page was asked for (the redirect too), so the unverified ones were checked, not skipped.
  await eventually(async () => ['/home', '/blog', '/go', '/nolink', '/other'].every((p) => fetched.includes(p)));
  const byName = Object.fromEntries((await fields()).map((f) => [f.name, f.verified_at]));
  expect(byName).toEqual({
    Home: expect.any(String),
    Blog: expect.any(String),
    Plain: null,
    Other: null,
  });
  // The field's HTML links with rel="me", so other servers can verify it the same way.
  expect((await fields())[0].value).toContain('rel="nofollow noopener me"');

  // Another value loses the verification; the same value keeps it without asking again.
  const asked = fetched.filter((p) => p === '/home').length;
  await setFields([
    ['Home', `${base}/home`],
    ['Blog', `${base}/nolink`],
    ['Text', 'not a link'],
  ]);
  await eventually(
    async () => fetched.filter((p) => p === '/nolink').length >= 2,
    60_000,
    'the changed field checked again',
  );
  const after = Object.fromEntries((await fields()).map((f) => [f.name, f.verified_at]));
  expect(after).toEqual({ Home: byName.Home, Blog: null, Text: null });
  expect(fetched.filter((p) => p === '/home').length).toBe(asked);
}, 180_000);
