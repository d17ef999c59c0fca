// CORS as a browser enforces it: a page served from another origin (a second HTTP server) uses the
// API with a bearer token from script, as a web client such as Elk or Phanpy does. Chromium sends
// the preflights; a missing method or exposed header makes fetch() fail or hides the header, which
// no test calling the API from Node could see.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Core } from '../../../services/core/context.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { createRemoteAccount, createRemoteStatus } from '../../support/remoteAccounts.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';

/** The web client's origin: one empty page. */
async function startClientOrigin(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!DOCTYPE html><title>Web client</title><main>client</main>');
  });
  // `localhost`, not 127.0.0.1: another host name as well as another port.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

interface Answer {
  ok: boolean;
  status: number;
  error?: string;
  headers: Record<string, string | null>;
  body: unknown;
}

describeWithBrowser('browserCors.test.ts')('CORS for web clients on another origin (Chromium)', () => {
  let core: Core;
  let server: TestServer;
  let client: { url: string; server: Server };
  let browser: Browser;
  let page: Page;
  let alice: TestUser;
  let streaming: StreamingServer;

  /** fetch() run by the page's script, as a web client would; network errors come back as `error`. */
  async function call(method: string, path: string, body?: unknown, url?: string): Promise<Answer> {
    return page.evaluate(
      async ({ method, target, token, body }) => {
        const exposed = [
          'link',
          'mastodon-async-refresh',
          'x-ratelimit-limit',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
          'x-request-id',
        ];
        try {
          const res = await fetch(target, {
            method,
            headers: {
              authorization: `Bearer ${token}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const headers = Object.fromEntries(exposed.map((h) => [h, res.headers.get(h)]));
          const text = await res.text();
          return { ok: res.ok, status: res.status, headers, body: text ? JSON.parse(text) : null };
        } catch (err) {
          return { ok: false, status: 0, error: String(err), headers: {}, body: null };
        }
      },
      { method, target: url ?? `${server.url}${path}`, token: alice.token, body },
    );
  }

  beforeAll(async () => {
    ({ core } = await createTestCore(testConfig()));
    server = await startTestServer(core);
    streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
    client = await startClientOrigin();
    alice = await createTestUser(core);
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(client.url);
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (client ? client.server.close(() => resolve()) : resolve()));
    await streaming?.stop(1000);
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it('posts, edits (PUT) and deletes (DELETE) a status, reading the rate-limit and request-id headers', async () => {
    const posted = await call('POST', '/api/v1/statuses', { status: 'from another origin' });
    expect(posted).toMatchObject({ ok: true, status: 200 });
    expect(Number(posted.headers['x-ratelimit-limit'])).toBe(300);
    expect(Number(posted.headers['x-ratelimit-remaining'])).toBeLessThan(300);
    expect(posted.headers['x-ratelimit-reset']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(posted.headers['x-request-id']).toEqual(expect.any(String));
    const id = (posted.body as { id: string }).id;

    const edited = await call('PUT', `/api/v1/statuses/${id}`, { status: 'edited from another origin' });
    expect(edited).toMatchObject({ ok: true, status: 200 });
    expect((edited.body as { content: string }).content).toContain('edited from another origin');

    const profile = await call('PATCH', '/api/v1/accounts/update_credentials', { display_name: 'Alice Web' });
    expect(profile).toMatchObject({ ok: true, status: 200, body: { display_name: 'Alice Web' } });

    const deleted = await call('DELETE', `/api/v1/statuses/${id}`);
    expect(deleted).toMatchObject({ ok: true, status: 200 });
    expect((await call('GET', `/api/v1/statuses/${id}`)).status).toBe(404);
  });

  it('pages a timeline by its Link header', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await call('POST', '/api/v1/statuses', { status: `page item ${i}` });
      ids.push((res.body as { id: string }).id);
    }
    const seen: string[] = [];
    let next: string | undefined = `${server.url}/api/v1/accounts/${String(alice.account._id)}/statuses?limit=2`;
    for (let pages = 0; next && pages < 10; pages += 1) {
      const res = await call('GET', '', undefined, next);
      expect(res).toMatchObject({ ok: true, status: 200 });
      const items = res.body as { id: string }[];
      if (items.length === 0) break;
      seen.push(...items.map((s) => s.id));
      // A script can read the Link header only if it is exposed.
      expect(res.headers.link).toContain('rel="prev"');
      // The Link names the configured domain (a proxy serves it in production); the test server's
      // origin stands in for it.
      const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.link ?? '')?.[1];
      next = link && `${server.url}${new URL(link).pathname}${new URL(link).search}`;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('reads Mastodon-Async-Refresh when opening a remote thread, and polls it', async () => {
    const author = await createRemoteAccount(core, 'https://remote.example', 'bob');
    const status = await createRemoteStatus(core, author, 'a remote thread');
    // Older than FETCH_REPLIES_INITIAL_WAIT_MINUTES, so opening it starts a crawl of its replies.
    await collection(core.db, statuses).updateOne(
      { _id: status._id },
      { $set: { createdAt: new Date(Date.now() - 3_600_000) } },
    );
    const context = await call('GET', `/api/v1/statuses/${String(status._id)}/context`);
    expect(context).toMatchObject({ ok: true, status: 200 });
    const refresh = context.headers['mastodon-async-refresh'];
    expect(refresh).toMatch(/^id="[^"]+", retry=\d+$/);
    const id = /id="([^"]+)"/.exec(refresh ?? '')?.[1] ?? '';
    const polled = await call('GET', `/api/v1_alpha/async_refreshes/${encodeURIComponent(id)}`);
    expect(polled).toMatchObject({ ok: true, status: 200, body: { async_refresh: { id, status: 'running' } } });
  });

  it('keeps the HTML OAuth pages closed to other origins', async () => {
    const res = await page.evaluate(async (target) => {
      try {
        await fetch(target);
        return 'readable';
      } catch {
        return 'blocked';
      }
    }, `${server.url}/oauth/authorize?response_type=code&client_id=x&redirect_uri=urn:ietf:wg:oauth:2.0:oob`);
    expect(res).toBe('blocked');
  });

  it('reads an event stream with a bearer token from another origin (the preflight is answered)', async () => {
    const url = `http://127.0.0.1:${streaming.port}/api/v1/streaming/user`;
    const res = await page.evaluate(
      async ({ url, token }) => {
        try {
          const controller = new AbortController();
          const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
          const first = await res.body!.getReader().read();
          controller.abort();
          return {
            status: res.status,
            type: res.headers.get('content-type'),
            first: new TextDecoder().decode(first.value),
          };
        } catch (err) {
          return { status: 0, error: String(err) };
        }
      },
      { url, token: alice.token },
    );
    expect(res).toMatchObject({ status: 200, type: 'text/event-stream', first: expect.stringContaining(':)') });
    // An error answer is readable too (not an opaque CORS failure).
    const denied = await page.evaluate(async (target) => {
      const res = await fetch(target, { headers: { authorization: 'Bearer nope' } });
      return { status: res.status, body: await res.json() };
    }, url);
    expect(denied).toEqual({ status: 401, body: { error: 'Invalid access token' } });
  });
});
