// Statuses against the interface specification and Mastodon's behaviour, over real HTTP:
// interactions through a reblog act on the original, single-status answers carry the viewer's
// flags of the original, edits reset `sensitive` like Mastodon, link markup keeps `class=""`.
import { testConfig } from '../../support/config.ts';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import type { Core } from '../../../services/core/context.ts';
import { call } from './helpers.ts';

let core: Core;
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  ({ core } = await createTestCore(testConfig({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' })));
  server = await startTestServer(core);
  [alice, bob, carol] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
});

afterAll(async () => {
  await server?.close();
  if (core) await closeTestCore(core);
});

async function post(user: TestUser, form: string) {
  const res = await call(server, 'POST', '/api/v1/statuses', { token: user.token, form });
  expect(res.status).toBe(200);
  return res.body;
}

describe('interactions through a reblog', () => {
  it('favouriting a reblog favourites the original, and the answer says favourited', async () => {
    const original = await post(alice, 'status=original');
    const reblog = (await call(server, 'POST', `/api/v1/statuses/${original.id}/reblog`, { token: bob.token })).body;
    const fav = await call(server, 'POST', `/api/v1/statuses/${reblog.id}/favourite`, { token: carol.token });
    expect(fav.status).toBe(200);
    expect(fav.body.favourited).toBe(true);
    expect(fav.body.reblog.favourited).toBe(true);
    const read = await call(server, 'GET', `/api/v1/statuses/${original.id}`, { token: carol.token });
    expect(read.body).toMatchObject({ favourited: true, favourites_count: 1 });
    const favs = await call(server, 'GET', '/api/v1/favourites', { token: carol.token });
    expect(favs.body.map((s: { id: string }) => s.id)).toEqual([original.id]);
  });

  it('bookmarking a reblog bookmarks the original', async () => {
    const original = await post(alice, 'status=to bookmark');
    const reblog = (await call(server, 'POST', `/api/v1/statuses/${original.id}/reblog`, { token: bob.token })).body;
    const mark = await call(server, 'POST', `/api/v1/statuses/${reblog.id}/bookmark`, { token: carol.token });
    expect(mark.status).toBe(200);
    expect(mark.body.bookmarked).toBe(true);
    const marks = await call(server, 'GET', '/api/v1/bookmarks', { token: carol.token });
    expect(marks.body.map((s: { id: string }) => s.id)).toEqual([original.id]);
  });

  it('the reblog answer is the wrapper with reblogged true, like Mastodon', async () => {
    const original = await post(alice, 'status=boost me');
    const reblog = await call(server, 'POST', `/api/v1/statuses/${original.id}/reblog`, { token: carol.token });
    expect(reblog.status).toBe(200);
    expect(reblog.body.id).not.toBe(original.id);
    expect(reblog.body.reblog.id).toBe(original.id);
    expect(reblog.body.reblogged).toBe(true);
    expect(reblog.body.reblog.reblogged).toBe(true);
    // Reading the wrapper by id shows the viewer's flags of the original too.
    const wrapper = await call(server, 'GET', `/api/v1/statuses/${reblog.body.id}`, { token: carol.token });
    expect(wrapper.body.reblogged).toBe(true);
    const undone = await call(server, 'POST', `/api/v1/statuses/${original.id}/unreblog`, { token: carol.token });
    expect(undone.body).toMatchObject({ id: original.id, reblogged: false });
  });
});

describe('edits', () => {
  it('an edit without `sensitive` or a content warning makes the status not sensitive (Mastodon resets it)', async () => {
    const status = await post(alice, 'status=v1&spoiler_text=cw');
    expect(status.sensitive).toBe(true);
    const edited = await call(server, 'PUT', `/api/v1/statuses/${status.id}`, {
      token: alice.token,
      form: 'status=v2',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ spoiler_text: '', sensitive: false });
    const explicit = await call(server, 'PUT', `/api/v1/statuses/${status.id}`, {
      token: alice.token,
      form: 'status=v3&sensitive=true',
    });
    expect(explicit.body.sensitive).toBe(true);
  });
});

describe('HTML of links', () => {
  it('a short link has an empty class on its display span, as Mastodon renders it', async () => {
    const status = await post(alice, `status=${encodeURIComponent('see https://x.example/a')}`);
    expect(status.content).toContain(
      '<span class="invisible">https://</span><span class="">x.example/a</span><span class="invisible"></span>',
    );
  });
});

describe('GET /api/v1/statuses?id[]=', () => {
  it('answers each visible status once, in the order asked, skipping unknown, malformed and invisible ids', async () => {
    const a = await post(alice, 'status=one');
    const b = await post(alice, 'status=two');
    const hidden = await post(alice, 'status=followers only&visibility=private');
    const q = [b.id, 'nope', a.id, b.id, '1', hidden.id].map((id) => `id[]=${encodeURIComponent(id)}`).join('&');
    const res = await call(server, 'GET', `/api/v1/statuses?${q}`, { token: bob.token });
    expect(res.status).toBe(200);
    expect(res.body.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
  });

  it('refuses more than 20 distinct ids with 422, like Mastodon', async () => {
    const q = Array.from({ length: 21 }, (_, i) => `id[]=${1000 + i}`).join('&');
    expect((await call(server, 'GET', `/api/v1/statuses?${q}`)).status).toBe(422);
    const same = Array.from({ length: 30 }, () => 'id[]=1000').join('&');
    expect((await call(server, 'GET', `/api/v1/statuses?${same}`)).status).toBe(200);
  });
});

describe('context', () => {
  it('orders descendants depth-first; a deleted reply cuts the thread above its own replies', async () => {
    const root = await post(alice, 'status=root');
    const r1 = await post(bob, `status=r1&in_reply_to_id=${root.id}`);
    const r2 = await post(alice, `status=r2&in_reply_to_id=${r1.id}`);
    const r3 = await post(carol, `status=r3&in_reply_to_id=${root.id}`);
    const ctx = await call(server, 'GET', `/api/v1/statuses/${r2.id}/context`);
    expect(ctx.body.ancestors.map((s: { id: string }) => s.id)).toEqual([root.id, r1.id]);
    const rootCtx = await call(server, 'GET', `/api/v1/statuses/${root.id}/context`, { token: carol.token });
    expect(rootCtx.body.descendants.map((s: { id: string }) => s.id)).toEqual([r1.id, r2.id, r3.id]);

    expect((await call(server, 'DELETE', `/api/v1/statuses/${r1.id}`, { token: bob.token })).status).toBe(200);
    const after = await call(server, 'GET', `/api/v1/statuses/${r2.id}/context`);
    expect(after.body.ancestors).toEqual([]);
    const rootAfter = await call(server, 'GET', `/api/v1/statuses/${root.id}/context`);
    expect(rootAfter.body.descendants.map((s: { id: string }) => s.id)).toEqual([r3.id]);
  });
});

describe('mentions', () => {
  it('an unconfirmed or unapproved account is not mentionable (it stays plain text, no mention entry)', async () => {
    const unconfirmed = await createTestUser(core, { confirmed: false });
    const unapproved = await createTestUser(core, { approved: false });
    const status = await post(
      alice,
      `status=${encodeURIComponent(`hi @${unconfirmed.account.username} @${unapproved.account.username} @${bob.account.username}`)}`,
    );
    expect(status.mentions.map((m: { id: string }) => m.id)).toEqual([String(bob.account._id)]);
    expect(status.content).not.toContain(`/@${unconfirmed.account.username}`);
    expect(status.content).not.toContain(`/@${unapproved.account.username}`);
  });
});

describe('status language', () => {
  it('keeps a real language code and replaces an unknown one with the user language', async () => {
    const known = await call(server, 'POST', '/api/v1/statuses', {
      token: alice.token,
      json: { status: 'Hallo', language: 'de' },
    });
    expect(known.body.language).toBe('de');
    const unknown = await call(server, 'POST', '/api/v1/statuses', {
      token: alice.token,
      json: { status: 'hm', language: 'xx' },
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body.language).toBe('en');
  });
});
