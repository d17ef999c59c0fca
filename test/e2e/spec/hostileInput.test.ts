// Hostile input against every registered route: wrong JSON types for each known field, malformed
// bodies, odd content types, bad ids, Rails bracket garbage, huge and odd strings, bad pagination.
// The rule (guide): bad input gets a 4xx in Mastodon's format (`{"error": "..."}`), never a 500,
// and nothing is logged as a failed request. The set of requests is fixed (no randomness), so a
// failure names the exact request that reproduces it.
import diagnostics from 'node:diagnostics_channel';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { RouteOptions } from 'fastify';
import { createTestCore, closeTestCore, deleteRedisKeys } from '../../support/core.ts';
import { createTestApp, createTestUser, startTestServer, type TestServer } from '../../support/fixtures.ts';
import { oggAudio, png } from '../../support/mediaFiles.ts';
import type { Core } from '../../../services/core/context.ts';

jest.setTimeout(120_000);

interface Route {
  method: string;
  url: string;
  fields: string[];
  query: string[];
  auth: string | undefined;
}

interface Hostile {
  label: string;
  path: string;
  body?: string | FormData;
  contentType?: string;
  headers?: Record<string, string>;
}

const LONG = 'a'.repeat(100 * 1024);

/** JSON values (raw text: some are not what JSON.stringify would write) that no field expects all of. */
const WRONG_VALUES: string[] = [
  '['.repeat(3000) + ']'.repeat(3000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  '["x"]',
  '[]',
  '{"a":1}',
  '99999999999999999999999',
  '1e400',
  '-1',
  '0',
  '1.5',
  'null',
  'true',
  '"abc"',
  `"${LONG}"`,
  '"\\ud800"',
  '"a\\u0000b"',
  '"\\u202eevil\\u200f"',
  '[[1]]',
  '[{"$where":1,"a.b":2}]',
];

/** Nested values for the object-shaped fields, beyond the plain wrong types above. */
const NESTED_VALUES: Record<string, string[]> = {
  poll: [
    '{"options":"x"}',
    '{"options":[[1]],"expires_in":300}',
    '{"options":[{},{}],"expires_in":300}',
    '{"options":["a",null],"expires_in":300}',
    '{"options":["a","b"],"expires_in":-1}',
    '{"options":["a","b"],"expires_in":"abc"}',
    '{"options":["a","b"],"expires_in":1e400}',
    '{"options":["a","b"],"expires_in":300,"multiple":[],"hide_totals":{}}',
    `{"options":["${LONG}","b"],"expires_in":300}`,
    '{"options":["a\\u0000","b.c","$d"],"expires_in":300}',
  ],
  source: ['{"privacy":[]}', '{"language":{}}', '{"sensitive":"maybe"}', '{"$set":{"a":1},"a.b":1}', '{"note":[]}'],
  fields_attributes: [
    '[{"name":{},"value":[]}]',
    '{"0":{"name":"a.b","value":"$x"}}',
    '{"$x":{"name":"a","value":"b"},"a.b":{"name":"c","value":"d"}}',
    '[{"name":"a\\u0000","value":"\\ud800"}]',
    '"string"',
    '[null,1,"x"]',
  ],
  media_attributes: [
    '[{"id":"abc"}]',
    '[{"id":{}}]',
    '[{"id":"99999999999999999999999","description":[]}]',
    '"x"',
    '[null]',
  ],
  media_ids: ['["abc"]', '["99999999999999999999999"]', '[{}]', '["-1"]', '"notanarray"'],
  choices: ['["abc"]', '[-1]', '[99999999999999999999999]', '[0,0,0]', '"0"'],
  redirect_uris: ['"javascript:alert(1)"', '["a","b"]', '"not a uri"'],
  scopes: ['"read write admin:everything"', '"\\u0000"'],
  scheduled_at: ['"not a date"', '"9999-99-99T99:99:99Z"', '"-271821-04-20T00:00:00Z"', '"1970-01-01T00:00:00Z"'],
  focus: ['"abc"', '"5,5"', '"-9e999,0"'],
  subscription: [
    '{"endpoint":{},"keys":[]}',
    '{"endpoint":"https://push.example/x","keys":{"p256dh":[],"auth":{}}}',
    '{"endpoint":"http://127.0.0.1/x","keys":{"p256dh":"x","auth":"y"}}',
    '{"endpoint":"javascript:alert(1)","keys":{"p256dh":"BAAA","auth":"AAAA"}}',
    '"string"',
    '[null]',
  ],
  data: ['{"alerts":"x"}', '{"alerts":{"mention":{}}}', '{"alerts":[1]}', '{"policy":[]}', '{"policy":"x"}', '"x"'],
};

/** Fields the routes read without declaring them in a body schema (OAuth, sign-in, ...). */
const UNDECLARED_FIELDS: Record<string, string[]> = {
  '/oauth/token': ['grant_type', 'code', 'client_id', 'client_secret', 'redirect_uri', 'scope', 'code_verifier'],
  '/oauth/revoke': ['token', 'client_id', 'client_secret'],
  '/oauth/authorize': ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge'],
  '/auth/sign_in': ['email', 'password', 'return_to'],
  'GET /oauth/authorize': [
    'client_id',
    'redirect_uri',
    'response_type',
    'scope',
    'state',
    'code_challenge',
    'code_challenge_method',
    'force_login',
    'lang',
  ],
  'GET /auth/sign_in': ['return_to'],
  '/api/v1/media': ['file', 'thumbnail'],
  '/api/v2/media': ['file', 'thumbnail'],
};

/** Routes that take files, and the file fields they read. */
const UPLOAD_FIELDS: Record<string, string[]> = {
  '/api/v1/media': ['file', 'thumbnail'],
  '/api/v2/media': ['file', 'thumbnail'],
  'PUT /api/v1/media/:id': ['thumbnail'],
  '/api/v1/accounts/update_credentials': ['avatar', 'header'],
};

/** Form-field strings sent next to a valid file (multipart carries no types, only text). */
const FORM_VALUES = [LONG, 'a\u0000b', '\ud800', '\u202eevil\u200f', '-9e999,abc', ''];

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k += 1) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A PNG whose header claims `width`×`height` pixels (a decompression bomb's header). */
function pngClaiming(real: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(real);
  // IHDR: 8-byte signature, 4-byte length, 'IHDR', width, height, ..., CRC over type+data.
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  out.writeUInt32BE(crc32(out.subarray(12, 29)), 29);
  return out;
}

/** Odd headers, one request each per route (the route's token unless the header replaces it). */
const HEADER_VARIANTS: { label: string; headers: Record<string, string>; body?: string }[] = [
  { label: 'long bearer', headers: { authorization: `Bearer ${'x'.repeat(4000)}` } },
  { label: 'empty bearer', headers: { authorization: 'Bearer' } },
  { label: 'basic auth', headers: { authorization: 'Basic Zm9vOmJhcg==' } },
  { label: 'spaced bearer', headers: { authorization: 'Bearer a b c' } },
  { label: 'long idempotency key', headers: { 'idempotency-key': 'x'.repeat(4000) } },
  { label: 'odd idempotency key', headers: { 'idempotency-key': '$where.a\\' } },
  { label: 'odd accept-language', headers: { 'accept-language': '*;q=abc,,,;;;zz-ZZZZZZZZZ' } },
  { label: 'odd forwarded-for', headers: { 'x-forwarded-for': 'garbage, ::ffff:999.1.1.1' } },
  { label: 'multipart without boundary', headers: { 'content-type': 'multipart/form-data' }, body: 'x' },
  {
    label: 'broken multipart',
    headers: { 'content-type': 'multipart/form-data; boundary=abc' },
    body: '--abc\r\nContent-Disposition: form-data; name="status"\r\n\r\nx',
  },
  { label: 'gzip claimed', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '{}' },
];

/** Query values for each field a GET route reads (a URL has no types: shapes and bytes only). */
const QUERY_VALUES = [
  '[]=x',
  '[a][b]=1',
  `=${'q'.repeat(8000)}`,
  '=%00',
  '=%ED%A0%80',
  '=-1',
  '=99999999999999999999',
  '=',
];

/** Tails for wildcard routes (`/system/*`): traversal, NUL, bad percent-encoding, length. */
const BAD_TAILS = [
  '%2e%2e/%2e%2e/etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%00',
  '%ff%fe',
  '%',
  'a/'.repeat(2000),
  'cache/../../x',
  'upload/x',
];

/** Range headers on a real stored file. */
const BAD_RANGES = [
  'bytes=999999999-',
  'bytes=-0',
  'bytes=5-1',
  'bytes=0-99999999999999999999',
  'bytes=abc',
  'bytes=0-1,2-3',
  'bytes=-99999999999999999999',
  'items=0-1',
];

const BAD_IDS = [
  'abc',
  '99999999999999999999999',
  '-1',
  '0',
  '%00',
  '9223372036854775808',
  '1e5',
  '0x10',
  '%20',
  '..',
  '%2F',
  'a'.repeat(5000),
];

const BAD_QUERIES = [
  'limit=-5',
  'limit=abc',
  'limit=99999999999999999999',
  'max_id=abc',
  'min_id=99999999999999999999',
  'since_id=-1',
  'max_id[]=1',
  'limit[a]=1',
  'id[]=abc&id[]=99999999999999999999999',
  'id=abc',
  'id[a][b]=1',
  'acct=%00',
  `acct=${LONG}`,
  'acct[]=x',
  'code[]=x',
  'confirmation_token[a]=1',
  'a[b][c][d][e][f][g][h][i]=1',
  'exclude_replies=%ED%A0%80',
  '%=%',
];

/** Raw bodies that are not what any route expects. */
const RAW_BODIES: { label: string; body: string; contentType?: string }[] = [
  { label: 'malformed JSON', body: '{"status":', contentType: 'application/json' },
  { label: 'JSON array', body: '[1,2]', contentType: 'application/json' },
  { label: 'JSON string', body: '"str"', contentType: 'application/json' },
  { label: 'JSON null', body: 'null', contentType: 'application/json' },
  { label: 'JSON number', body: '123', contentType: 'application/json' },
  {
    label: 'JSON with $ and . keys',
    body: '{"$where":"1","a.b":1,"__proto__":{"x":1}}',
    contentType: 'application/json',
  },
  { label: 'text/plain', body: 'status=hello', contentType: 'text/plain' },
  { label: 'xml', body: '<a/>', contentType: 'application/xml' },
  { label: 'form as JSON', body: 'status=hello', contentType: 'application/json' },
  { label: 'JSON as form', body: '{"status":"x"}', contentType: 'application/x-www-form-urlencoded' },
  { label: 'deep brackets', body: 'a[b][c][d][e][f][g][h][i]=1' },
  { label: 'poll options scalar', body: 'poll[options]=x&poll[expires_in]=300&status=x' },
  { label: 'poll options nested', body: 'poll[options][][x]=1&poll[expires_in][]=1' },
  { label: 'media_ids scalar', body: 'media_ids=notanarray&status=x' },
  { label: 'media_ids hash', body: 'media_ids[a]=1&status=x' },
  { label: 'scalar as array', body: 'status[]=x&visibility[]=public&spoiler_text[a]=1&choices=1' },
  { label: 'fields hash', body: 'fields_attributes[0][name][]=x&fields_attributes[a.b][value]=1' },
  { label: 'source nested', body: 'source[privacy][]=x&source[$set]=1' },
  { label: 'prototype keys', body: '__proto__[x]=1&constructor[prototype][x]=1' },
  { label: 'invalid utf-8', body: 'status=%ED%A0%80&display_name=%ff%fe' },
  { label: 'bad percent', body: 'status=%&note=%zz' },
  { label: 'NUL and RTL', body: 'status=a%00b&display_name=%E2%80%AEx&note=%00&description=%00' },
  { label: 'empty keys', body: '=1&[]=2&[a]=3&&' },
  { label: 'form JSON charset', body: '{', contentType: 'application/json; charset=utf-16' },
  { label: 'JSON nested 200k deep', body: '['.repeat(200_000) + ']'.repeat(200_000), contentType: 'application/json' },
  { label: 'JSON over 1 MB', body: `{"status":"${'a'.repeat(1_100_000)}"}`, contentType: 'application/json' },
  { label: 'form over 1 MB', body: `status=${'a'.repeat(1_100_000)}` },
  { label: 'form with 5000 keys', body: Array.from({ length: 5000 }, (_, i) => `k${i}=1`).join('&') },
  { label: 'form 5000-item array', body: Array.from({ length: 5000 }, () => 'media_ids[]=1').join('&') },
];

function multipartGarbage(): FormData {
  const form = new FormData();
  form.append('a[b][c][d][e][f][g][h][i]', '1');
  form.append('poll[options]', 'x');
  form.append('media_ids', 'notanarray');
  form.append('status', 'a\u0000b');
  form.append('file', new Blob([Buffer.from('not an image')], { type: 'image/png' }), 'x.png');
  return form;
}

/** A logger that keeps every error-level line the server writes (failed requests among them). */
function capturingLogger(): { logger: Core['logger']; errors: string[] } {
  const errors: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = chunk.toString();
      const parsed = JSON.parse(line) as { level: number };
      if (parsed.level >= 50) errors.push(line.slice(0, 2000));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, stream) as unknown as Core['logger'], errors };
}

describe('hostile input on every route', () => {
  let core: Core;
  let server: TestServer;
  let userToken: string;
  let appToken: string;
  const routes: Route[] = [];
  const realIds: Record<string, string> = {};
  let logErrors: string[] = [];
  let goodPng: Buffer;
  let realFile: string;

  const onInit = (message: unknown): void => {
    const { fastify } = message as { fastify: { addHook(name: 'onRoute', fn: (r: RouteOptions) => void): void } };
    fastify.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) {
        const schema = (r.schema ?? {}) as { body?: { properties?: object }; querystring?: { properties?: object } };
        routes.push({
          method,
          url: r.url,
          fields: Object.keys(schema.body?.properties ?? {}),
          query: Object.keys(schema.querystring?.properties ?? {}),
          auth: (r.config as { auth?: { user?: string } } | undefined)?.auth?.user,
        });
      }
    });
  };

  beforeAll(async () => {
    ({ core } = await createTestCore());
    const capture = capturingLogger();
    logErrors = capture.errors;
    // The API's logger is core.logger's child: swap it before the app is built.
    (core as { logger: Core['logger'] }).logger = capture.logger;
    diagnostics.subscribe('fastify.initialization', onInit);
    try {
      server = await startTestServer(core);
    } finally {
      diagnostics.unsubscribe('fastify.initialization', onInit);
    }
    // The Owner, with the admin scopes: hostile input reaches past the admin routes' guard too.
    userToken = (
      await createTestUser(core, {
        role: 'Owner',
        scopes: ['read', 'write', 'follow', 'push', 'admin:read', 'admin:write'],
      })
    ).token;
    appToken = (await createTestApp(core)).token;

    // Real resources, so hostile bodies get past the id lookup and reach the deeper code.
    const auth = { authorization: `Bearer ${userToken}` };
    const form = new FormData();
    goodPng = await png(8, 8);
    form.append('file', new Blob([new Uint8Array(goodPng)], { type: 'image/png' }), 'a.png');
    const media = (await (
      await fetch(`${server.url}/api/v1/media`, { method: 'POST', headers: auth, body: form })
    ).json()) as { id: string; url: string };
    realFile = new URL(media.url).pathname;
    const post = async (body: unknown): Promise<{ id: string; poll?: { id: string } }> => {
      const res = await fetch(`${server.url}/api/v1/statuses`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`setup post failed: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string; poll?: { id: string } };
    };
    const status = await post({ status: 'hello', media_ids: [media.id] });
    const withPoll = await post({ status: 'poll', poll: { options: ['a', 'b'], expires_in: 3600 } });
    const scheduled = await post({ status: 'later', scheduled_at: new Date(Date.now() + 3600_000).toISOString() });
    const me = (await (await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: auth })).json()) as {
      id: string;
    };
    // Audio, so that a custom thumbnail is processed (images ignore it).
    const audioForm = new FormData();
    audioForm.append('file', new Blob([new Uint8Array(await oggAudio())], { type: 'audio/ogg' }), 'a.ogg');
    const audio = await fetch(`${server.url}/api/v1/media`, { method: 'POST', headers: auth, body: audioForm });
    if (audio.status !== 200) throw new Error(`setup audio upload failed: ${audio.status} ${await audio.text()}`);
    realIds['/api/v1/media/'] = ((await audio.json()) as { id: string }).id;
    realIds['/api/v1/statuses/'] = status.id;
    realIds['/api/v1/polls/'] = withPoll.poll!.id;
    realIds['/api/v1/scheduled_statuses/'] = scheduled.id;
    realIds['/api/v1/accounts/'] = me.id;
  });

  afterAll(async () => {
    await server?.close();
    if (core) await closeTestCore(core);
  });

  function realPath(url: string): string {
    const prefix = Object.keys(realIds).find((p) => url.startsWith(p));
    return url.replace(/:\w+/g, prefix ? realIds[prefix] : '1').replace(/\*$/, 'x');
  }

  function fields(route: Route): string[] {
    const undeclared = UNDECLARED_FIELDS[`${route.method} ${route.url}`] ?? UNDECLARED_FIELDS[route.url] ?? [];
    return [...new Set([...route.fields, ...route.query, ...undeclared])];
  }

  function hostileRequests(route: Route): Hostile[] {
    const out: Hostile[] = [];
    const path = realPath(route.url);
    for (const bad of route.url.endsWith('*') ? BAD_TAILS : []) {
      out.push({ label: `tail ${bad.slice(0, 40)}`, path: route.url.replace(/\*$/, bad) });
    }
    if (route.url === '/system/*') {
      for (const range of BAD_RANGES) out.push({ label: `range ${range}`, path: realFile, headers: { range } });
    }
    for (const bad of route.url.includes(':') ? BAD_IDS : []) {
      out.push({ label: `id ${bad}`, path: route.url.replace(/:\w+/g, bad) });
    }
    // HEAD runs the GET handler (Fastify's exposed head routes): the ids are enough there.
    if (route.method === 'HEAD') return out;
    for (const v of HEADER_VARIANTS) {
      if (route.method === 'GET' && v.body !== undefined) continue;
      out.push({ label: `header ${v.label}`, path, headers: v.headers, body: v.body });
    }
    if (route.method === 'GET') {
      for (const q of BAD_QUERIES) out.push({ label: `query ${q.slice(0, 60)}`, path: `${path}?${q}` });
      for (const field of fields(route)) {
        for (const v of QUERY_VALUES)
          out.push({ label: `query ${field}${v.slice(0, 30)}`, path: `${path}?${field}${v}` });
      }
      return out;
    }
    if (route.method === 'OPTIONS') return out;
    for (const field of fields(route)) {
      for (const value of [...WRONG_VALUES, ...(NESTED_VALUES[field] ?? [])]) {
        const body = `{"${field}":${value}}`;
        out.push({ label: `${field}=${value.slice(0, 60)}`, path, body, contentType: 'application/json' });
      }
    }
    for (const raw of RAW_BODIES) {
      out.push({
        label: raw.label,
        path,
        body: raw.body,
        contentType: raw.contentType ?? 'application/x-www-form-urlencoded',
      });
    }
    out.push({ label: 'multipart garbage', path, body: multipartGarbage() });
    out.push(...uploadRequests(route, path));
    out.push({ label: 'query garbage', path: `${path}?a[b][c][d][e][f][g][h][i]=1&poll[options]=x&media_ids=x` });
    return out;
  }

  // Every primary of a cluster is scanned, and the keys deleted slot by slot.
  const clearRateLimits = () => deleteRedisKeys(core.redis, core.config.redisNamespace, 'ratelimit:*');

  /** Hostile files (and hostile fields next to a good file) for a route that takes uploads. */
  function uploadRequests(route: Route, path: string): Hostile[] {
    const files = UPLOAD_FIELDS[`${route.method} ${route.url}`] ?? UPLOAD_FIELDS[route.url] ?? [];
    const out: Hostile[] = [];
    const form = (parts: [string, string | Blob, string?][]): FormData => {
      const f = new FormData();
      for (const [name, value, filename] of parts) {
        if (typeof value === 'string') f.append(name, value);
        else f.append(name, value, filename ?? 'x.png');
      }
      return f;
    };
    const blob = (data: Buffer, type = 'image/png'): Blob => new Blob([new Uint8Array(data)], { type });
    for (const field of files) {
      const bad: [string, Blob, string?][] = [
        ['garbage', blob(Buffer.from('not an image at all'))],
        ['empty', blob(Buffer.alloc(0))],
        ['truncated png', blob(goodPng.subarray(0, 60))],
        ['corrupt png body', blob(Buffer.concat([goodPng.subarray(0, 40), Buffer.alloc(200, 7)]))],
        ['png bomb header', blob(pngClaiming(goodPng, 100_000, 100_000))],
        ['png wide header', blob(pngClaiming(goodPng, 0x7fffffff, 1))],
        ['html as png', blob(Buffer.from('<html><script>alert(1)</script></html>'), 'text/html')],
        ['png as exe', blob(goodPng, 'application/x-msdownload')],
        ['traversal name', blob(goodPng), '../../../etc/passwd'],
        ['NUL name', blob(goodPng), 'a\u0000b.png'],
      ];
      // A second file field (thumbnail) comes with a good primary file, or the route stops early.
      const primary: [string, Blob][] = field === files[0] ? [] : [[files[0], blob(goodPng)]];
      for (const [label, value, filename] of bad) {
        out.push({ label: `${field}: ${label}`, path, body: form([...primary, [field, value, filename]]) });
      }
      out.push({ label: `${field}[]`, path, body: form([[`${field}[]`, blob(goodPng)]]) });
      out.push({ label: `${field}[a][b]`, path, body: form([[`${field}[a][b]`, blob(goodPng)]]) });
      out.push({
        label: `${field} twice`,
        path,
        body: form([
          [field, blob(goodPng)],
          [field, blob(Buffer.from('x'))],
        ]),
      });
      out.push({
        label: `${field} among 5 files`,
        path,
        body: form(['a', 'b', 'c', 'd', field].map((n) => [n, blob(goodPng)] as [string, Blob])),
      });
    }
    if (files.length > 0) {
      for (const field of fields(route)) {
        for (const value of FORM_VALUES) {
          out.push({
            label: `multipart ${field}=${value.slice(0, 20)}`,
            path,
            body: form([
              [files[0], blob(goodPng)],
              [field, value],
            ]),
          });
        }
      }
    }
    return out;
  }

  /** Sends one request; answers a description of what is wrong with the answer, or null. */
  async function probe(
    what: string,
    routeUrl: string,
    path: string,
    init: { method: string; headers: Record<string, string>; body?: string | FormData },
  ): Promise<string | null> {
    let res: Response;
    try {
      res = await fetch(`${server.url}${path}`, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      return `${what}: no answer (${String(err)})`;
    }
    const text = await res.text();
    if (res.status >= 500) return `${what}: ${res.status} ${text.slice(0, 200)}`;
    // A 416 (unsatisfiable byte range on a stored file) has no body, as from any file server.
    if (res.status < 400 || init.method === 'HEAD' || res.status === 416) return null;
    // The pages (services/web: OAuth, account, settings, filters, public and admin pages) are HTML for
    // people; their errors may be HTML pages too. The API and the ActivityPub documents answer JSON.
    const jsonOnly = /^\/(api|users|inbox|actor|nodeinfo|\.well-known)(\/|$)|^\/oauth\/(token|revoke)$/.test(routeUrl);
    const html = !jsonOnly && (res.headers.get('content-type') ?? '').includes('html');
    if (html) return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${what}: ${res.status} not JSON: ${text.slice(0, 200)}`;
    }
    if (typeof (body as { error?: unknown } | null)?.error !== 'string') {
      return `${what}: ${res.status} without a string error: ${text.slice(0, 200)}`;
    }
    return null;
  }

  it('answers every hostile request with < 500 and a Mastodon error body', async () => {
    // HOSTILE_ROUTES (a regular expression on the route's path) narrows a local run to some routes.
    const only = process.env.HOSTILE_ROUTES ? new RegExp(process.env.HOSTILE_ROUTES) : null;
    const targets = routes.filter((r) => r.url !== '*' && (!only || only.test(r.url)));
    expect(targets.length).toBeGreaterThan(only ? 0 : 50);
    // Deletions last, so the real resources stay for the other routes.
    targets.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const failures: string[] = [];
    let sent = 0;
    for (const route of targets) {
      const token = route.auth === 'app' ? appToken : userToken;
      for (const h of hostileRequests(route)) {
        if (route.method !== 'GET' && route.method !== 'HEAD') await clearRateLimits();
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (h.contentType) headers['content-type'] = h.contentType;
        Object.assign(headers, h.headers);
        sent += 1;
        const failure = await probe(`${route.method} ${route.url} [${h.label}]`, route.url, h.path, {
          method: route.method,
          headers,
          body: h.body,
        });
        if (failure) failures.push(failure);
      }
    }
    expect(sent).toBeGreaterThan(only ? 0 : 1000);
    expect(failures).toEqual([]);
    expect(logErrors).toEqual([]);
    // Every route, the admin API's included (~45 routes, about 100 requests each), on a machine
    // shared with other work: many minutes under load.
  }, 1_800_000);

  it('answers hostile forms on the CSRF-protected sign-in and consent pages with < 500', async () => {
    const page = await fetch(`${server.url}/auth/sign_in`);
    const cookies = page.headers.getSetCookie().map((c) => c.split(';')[0]);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
    expect(csrf).toBeDefined();
    const failures: string[] = [];
    const post = async (path: string, form: string, cookie: string[]): Promise<void> => {
      await clearRateLimits();
      const failure = await probe(`POST ${path} [${form.slice(0, 80)}]`, path, path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie.join('; ') },
        body: `_csrf=${encodeURIComponent(csrf!)}&${form}`,
      });
      if (failure) failures.push(failure);
    };
    const values = [
      '[]=x',
      '[a][b]=1',
      `=${'q'.repeat(100 * 1024)}`,
      '=%00',
      '=%ED%A0%80',
      '=javascript:alert(1)',
      '=//evil.example/x',
      '=-1',
    ];
    const signIn = ['email', 'password', 'return_to'];
    for (const field of signIn) for (const v of values) await post('/auth/sign_in', `${field}${v}`, cookies);

    // Signed in for real, the consent form's fields reach the authorization code.
    const user = await createTestUser(core);
    const login = await fetch(`${server.url}/auth/sign_in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; ') },
      body: new URLSearchParams({ _csrf: csrf!, email: user.user.email, password: user.password }).toString(),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const session = [...cookies, ...login.headers.getSetCookie().map((c) => c.split(';')[0])];
    const { clientId } = await createTestApp(core);
    const good: Record<string, string> = {
      client_id: clientId,
      redirect_uri: 'urn:ietf:wg:oauth:2.0:oob',
      response_type: 'code',
      scope: 'read',
      decision: 'approve',
    };
    const consent = [...Object.keys(good), 'state', 'code_challenge', 'code_challenge_method', 'lang', 'force_login'];
    for (const field of consent) {
      for (const v of values) {
        const rest = Object.entries(good)
          .filter(([k]) => k !== field)
          .map(([k, val]) => `${k}=${encodeURIComponent(val)}`);
        await post('/oauth/authorize', [...rest, `${field}${v}`].join('&'), session);
      }
    }
    await post('/auth/sign_out', 'a[b][c][d][e][f][g][h][i]=1', session);
    expect(failures).toEqual([]);
    expect(logErrors).toEqual([]);
  });
});
