// Preview cards end to end: statuses with links go through the link-previews pipeline, which
// fetches pages from local HTTP servers: OpenGraph and oEmbed cards appear as the status's `card`;
// a page over 1 MiB, a page slower than 5 s, a redirect to an address ALLOWED_PRIVATE_ADDRESSES
// does not allow, a non-HTML answer and a direct message get no card; script in an embed is dropped.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../../../services/core/context.ts';
import { runLinkPreviewsPipeline, previewStatus } from '../../../pipelines/link-previews/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let alice: TestUser;
let site: http.Server;
let other: http.Server;
let base: string;
const timers = new Set<NodeJS.Timeout>();

const OG_PAGE = `<!DOCTYPE html><html lang="en-GB"><head>
<title>Fallback title</title>
<meta property="og:title" content="The &amp; Story">
<meta property="og:description" content="What happened today.">
<meta property="og:image" content="/img/cover.png">
<meta property="og:site_name" content="Local News">
<meta name="author" content="Ada">
<meta property="article:published_time" content="2026-01-02T03:04:05Z">
</head><body><script>alert(1)</script></body></html>`;

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(OG_PAGE));
  const otherPort = await listen(other, '127.0.0.2');
  site = http.createServer((req, res) => {
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    switch (req.url) {
      case '/story':
      case '/second':
        return html(OG_PAGE);
      case '/video':
        return html(
          `<html><head><title>Clip</title><link rel="alternate" type="application/json+oembed" href="${base}/oembed"></head></html>`,
        );
      case '/oembed':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            type: 'video',
            version: '1.0',
            title: 'A clip',
            author_name: 'Bob',
            provider_name: 'Tube',
            width: 640,
            height: 360,
            html: '<iframe src="https://tube.example/embed/1" width="640" height="360"></iframe><script>evil()</script>',
          }),
        );
      case '/huge':
        return html(`<html><head><title>Huge</title></head><body>${'x'.repeat(1_100_000)}</body></html>`);
      case '/slow': {
        const t = setTimeout(() => html(OG_PAGE), 7_000);
        timers.add(t);
        return;
      }
      case '/elsewhere':
        res.writeHead(302, { location: `http://127.0.0.2:${otherPort}/story` });
        return res.end();
      case '/hop':
        res.writeHead(301, { location: '/story' });
        return res.end();
      case '/image':
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(Buffer.alloc(10));
      default:
        res.writeHead(404).end();
    }
  });
  base = `http://127.0.0.1:${await listen(site, '127.0.0.1')}`;
  api = await startTestApi({ ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32' });
  core = api.core;
  pipeline = await runLinkPreviewsPipeline(core, consumerTuning);
  alice = await createTestUser(core);
}, 60_000);

afterAll(async () => {
  for (const t of timers) clearTimeout(t);
  await pipeline?.stop();
  await api?.close();
  site?.closeAllConnections();
  other?.closeAllConnections();
  await new Promise((r) => site?.close(r));
  await new Promise((r) => other?.close(r));
});

type Card = Record<string, unknown> | null;

async function post(text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await api.call('POST', '/api/v1/statuses', alice.token, { status: text, ...extra });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const cardOf = async (id: string): Promise<Card> =>
  ((await api.call('GET', `/api/v1/statuses/${id}`, alice.token)).body as { card: Card }).card;

async function cardEventually(id: string): Promise<Card> {
  await eventually(async () => (await cardOf(id)) !== null, 30_000, `card of ${id}`);
  return cardOf(id);
}

test('an OpenGraph page becomes the status card (first link, redirects followed)', async () => {
  const id = await post(`Read this: ${base}/story and also ${base}/video #news @nobody`);
  const card = await cardEventually(id);
  expect(card).toMatchObject({
    url: `${base}/story`,
    title: 'The & Story',
    description: 'What happened today.',
    type: 'link',
    image: `${base}/img/cover.png`,
    provider_name: 'Local News',
    author_name: 'Ada',
    language: 'en',
    published_at: '2026-01-02T03:04:05.000Z',
    html: '',
  });
  const hop = await post(`Moved: ${base}/hop`);
  expect(await cardEventually(hop)).toMatchObject({ url: `${base}/hop`, title: 'The & Story' });
});

test('oEmbed video: the embed keeps one https iframe and nothing else', async () => {
  const id = await post(`Watch ${base}/video`);
  const card = (await cardEventually(id)) as Record<string, unknown>;
  expect(card).toMatchObject({ type: 'video', title: 'A clip', author_name: 'Bob', provider_name: 'Tube', width: 640 });
  expect(card.html).toContain('<iframe src="https://tube.example/embed/1"');
  expect(card.html).not.toContain('script');
});

test('refused: too large, too slow, redirect to a disallowed private address, not HTML, direct messages', async () => {
  const refused = [
    await post(`Big ${base}/huge`),
    await post(`Slow ${base}/slow`),
    await post(`Redirect ${base}/elsewhere`),
    await post(`Picture ${base}/image`),
    await post(`Secret ${base}/story`, { visibility: 'direct' }),
  ];
  // Statuses of one author are handled in order: once a later one has its card, these are done.
  const marker = await post(`Marker ${base}/second`);
  await cardEventually(marker);
  for (const id of refused) expect(await cardOf(id)).toBeNull();
}, 60_000);

test('loopback is refused unless ALLOWED_PRIVATE_ADDRESSES allows it', async () => {
  const strict = await startTestApi();
  try {
    const bob = await createTestUser(strict.core);
    const res = await strict.call('POST', '/api/v1/statuses', bob.token, { status: `See ${base}/story` });
    expect(await previewStatus(strict.core, BigInt(res.body.id as string))).toBe(false);
    expect(await previewStatus(core, BigInt(await post(`Again ${base}/story`)))).toBe(true);
  } finally {
    await strict.close();
  }
});
