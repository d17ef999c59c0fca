// Statuses over real HTTP against the real MongoDB-wire server, Redis and Kafka: posting, text
// rendering, reading, editing, deleting, threads, interactions, pagination, idempotency, events.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { recordBlock, recordFollow } from '../../../services/core/graph/relations.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import type { JsonClient } from '../../support/http.ts';

let api: TestApi;
let core: Core;
let published: OutboxEvent[];
let call: JsonClient;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startTestApi();
  ({ core, published, call } = api);
  alice = await createTestUser(core, { username: 'alice' });
  bob = await createTestUser(core, { username: 'bob' });
});

afterAll(() => api?.close());

describe('posting', () => {
  it('renders mentions, hashtags and links and records them', async () => {
    const res = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'Hi @bob see https://example.com/a/very/long/path/that/goes/on #Tag',
      spoiler_text: 'cw',
      language: 'en',
    });
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s.content).toContain('class="u-url mention"');
    expect(s.content).toContain('<span class="ellipsis">example.com/a/very/long/path/t</span>');
    expect(s.content).toContain('class="mention hashtag" rel="tag">#<span>Tag</span></a>');
    expect(s.mentions).toEqual([{ id: String(bob.account._id), username: 'bob', acct: 'bob', url: bob.account.url }]);
    expect(s.tags.map((t: { name: string }) => t.name)).toEqual(['Tag']);
    expect(s.spoiler_text).toBe('cw');
    expect(s.sensitive).toBe(true);
    expect(s.language).toBe('en');
    expect(s.visibility).toBe('public');
    expect(s.uri).toMatch(new RegExp(`/users/alice/statuses/${s.id}$`));
    expect(s.url).toMatch(new RegExp(`/@alice/${s.id}$`));
    expect(s.application).toEqual({ name: alice.app.name, website: null });
    expect(s).toMatchObject({
      favourited: false,
      reblogged: false,
      bookmarked: false,
      muted: false,
      pinned: false,
      filtered: [],
      card: null,
      poll: null,
      emojis: [],
    });
    const event = published.find((e) => e.type === 'StatusCreated' && e.payload.statusId === s.id);
    expect(event?.key).toBe(String(alice.account._id));
    expect(event?.payload.mentionedAccountIds).toEqual([String(bob.account._id)]);
    expect(event?.payload.tagNames).toEqual(['tag']);
  });

  it('counts characters as Mastodon does and rejects blank or too long text', async () => {
    const url = `https://example.com/${'x'.repeat(600)}`;
    expect((await call('POST', '/api/v1/statuses', alice.token, { status: `${'a'.repeat(476)} ${url}` })).status).toBe(
      200,
    );
    const tooLong = await call('POST', '/api/v1/statuses', alice.token, { status: 'a'.repeat(501) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error).toBe('Validation failed: Text character limit of 500 exceeded');
    const blank = await call('POST', '/api/v1/statuses', alice.token, { status: '  ' });
    expect(blank.status).toBe(422);
    expect(blank.body.error).toBe("Validation failed: Text can't be blank");
    expect((await call('POST', '/api/v1/statuses', alice.token, { status: 'x', visibility: 'secret' })).status).toBe(
      422,
    );
  });

  it('answers with rate limit headers and needs write scope', async () => {
    const res = await call('POST', '/api/v1/statuses', alice.token, { status: 'limits' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
    const reader = await createTestUser(core, { scopes: ['read'] });
    expect((await call('POST', '/api/v1/statuses', reader.token, { status: 'nope' })).status).toBe(403);
    expect((await call('POST', '/api/v1/statuses', null, { status: 'nope' })).status).toBe(401);
  });

  it('creates exactly one status for 100 concurrent posts with one Idempotency-Key', async () => {
    const before = await core.db.collection('statuses').countDocuments({ accountId: bob.account._id });
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        call('POST', '/api/v1/statuses', bob.token, { status: 'once only' }, { 'idempotency-key': 'key-123' }),
      ),
    );
    expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const after = await core.db.collection('statuses').countDocuments({ accountId: bob.account._id });
    expect(after - before).toBe(1);
  });
});

describe('reading, editing, deleting', () => {
  it('edits with history and source, then deletes for redraft', async () => {
    const posted = (await call('POST', '/api/v1/statuses', alice.token, { status: 'first #draft', language: 'en' }))
      .body;
    const edited = await call('PUT', `/api/v1/statuses/${posted.id}`, alice.token, {
      status: 'second',
      spoiler_text: 'now with cw',
      language: 'de',
    });
    expect(edited.status).toBe(200);
    expect(edited.body.content).toBe('<p>second</p>');
    expect(edited.body.language).toBe('de');
    expect(edited.body.edited_at).not.toBeNull();
    const history = await call('GET', `/api/v1/statuses/${posted.id}/history`, null);
    expect(history.body.map((h: { content: string }) => h.content)).toEqual([posted.content, '<p>second</p>']);
    const source = await call('GET', `/api/v1/statuses/${posted.id}/source`, alice.token);
    expect(source.body).toEqual({ id: posted.id, text: 'second', spoiler_text: 'now with cw' });
    expect((await call('PUT', `/api/v1/statuses/${posted.id}`, bob.token, { status: 'hijack' })).status).toBe(404);
    expect(published.some((e) => e.type === 'StatusUpdated' && e.payload.statusId === posted.id)).toBe(true);

    expect((await call('DELETE', `/api/v1/statuses/${posted.id}`, bob.token)).status).toBe(404);
    const deleted = await call('DELETE', `/api/v1/statuses/${posted.id}`, alice.token);
    expect(deleted.status).toBe(200);
    expect(deleted.body.text).toBe('second');
    expect(deleted.body.content).toBeUndefined();
    expect((await call('GET', `/api/v1/statuses/${posted.id}`, alice.token)).status).toBe(404);
    expect(published.some((e) => e.type === 'StatusDeleted' && e.payload.statusId === posted.id)).toBe(true);
  });

  it('reads threads in order and several statuses at once', async () => {
    const root = (await call('POST', '/api/v1/statuses', alice.token, { status: 'root' })).body;
    const r1 = (await call('POST', '/api/v1/statuses', bob.token, { status: 'r1', in_reply_to_id: root.id })).body;
    const r2 = (await call('POST', '/api/v1/statuses', alice.token, { status: 'r2', in_reply_to_id: r1.id })).body;
    const r3 = (await call('POST', '/api/v1/statuses', bob.token, { status: 'r3', in_reply_to_id: root.id })).body;
    expect(r1.in_reply_to_account_id).toBe(String(alice.account._id));
    const ctx = await call('GET', `/api/v1/statuses/${r1.id}/context`, null);
    expect(ctx.body.ancestors.map((s: { id: string }) => s.id)).toEqual([root.id]);
    expect(ctx.body.descendants.map((s: { id: string }) => s.id)).toEqual([r2.id]);
    const rootCtx = await call('GET', `/api/v1/statuses/${root.id}/context`, alice.token);
    expect(rootCtx.body.descendants.map((s: { id: string }) => s.id)).toEqual([r1.id, r2.id, r3.id]);
    expect((await call('GET', `/api/v1/statuses/${root.id}`, null)).body.replies_count).toBe(2);
    const many = await call('GET', `/api/v1/statuses?id[]=${root.id}&id[]=${r3.id}&id[]=999`, null);
    expect(many.body.map((s: { id: string }) => s.id)).toEqual([root.id, r3.id]);
    const missing = await call('POST', '/api/v1/statuses', alice.token, { status: 'x', in_reply_to_id: '12345' });
    expect(missing.status).toBe(404);
  });
});

describe('interactions', () => {
  it('favourites, reblogs, bookmarks, pins, mutes and undoes them', async () => {
    const s = (await call('POST', '/api/v1/statuses', alice.token, { status: 'interact with me' })).body;
    const fav = await call('POST', `/api/v1/statuses/${s.id}/favourite`, bob.token);
    expect(fav.body).toMatchObject({ id: s.id, favourited: true, favourites_count: 1 });
    expect((await call('POST', `/api/v1/statuses/${s.id}/favourite`, bob.token)).body.favourites_count).toBe(1);
    const by = await call('GET', `/api/v1/statuses/${s.id}/favourited_by`, null);
    expect(by.body.map((a: { id: string }) => a.id)).toEqual([String(bob.account._id)]);

    const reblog = await call('POST', `/api/v1/statuses/${s.id}/reblog`, bob.token, { visibility: 'unlisted' });
    expect(reblog.body.reblog).toMatchObject({ id: s.id, reblogged: true, reblogs_count: 1, muted: false });
    expect(reblog.body.visibility).toBe('unlisted');
    expect(reblog.body.content).toBe('');
    const again = await call('POST', `/api/v1/statuses/${s.id}/reblog`, bob.token);
    expect(again.body.id).toBe(reblog.body.id);
    const rebloggedBy = await call('GET', `/api/v1/statuses/${s.id}/reblogged_by`, null);
    expect(rebloggedBy.body.map((a: { id: string }) => a.id)).toEqual([String(bob.account._id)]);

    expect((await call('POST', `/api/v1/statuses/${s.id}/bookmark`, bob.token)).body.bookmarked).toBe(true);
    expect((await call('POST', `/api/v1/statuses/${s.id}/pin`, bob.token)).status).toBe(422);
    expect((await call('POST', `/api/v1/statuses/${s.id}/pin`, alice.token)).body.pinned).toBe(true);
    expect((await call('POST', `/api/v1/statuses/${s.id}/mute`, bob.token)).body.muted).toBe(true);

    expect((await call('POST', `/api/v1/statuses/${s.id}/unfavourite`, bob.token)).body).toMatchObject({
      favourited: false,
      favourites_count: 0,
    });
    expect((await call('POST', `/api/v1/statuses/${s.id}/unreblog`, bob.token)).body).toMatchObject({
      id: s.id,
      reblogged: false,
      reblogs_count: 0,
    });
    expect((await call('POST', `/api/v1/statuses/${s.id}/unbookmark`, bob.token)).body.bookmarked).toBe(false);
    expect((await call('POST', `/api/v1/statuses/${s.id}/unpin`, alice.token)).body.pinned).toBe(false);
    expect((await call('POST', `/api/v1/statuses/${s.id}/unmute`, bob.token)).body.muted).toBe(false);
    const types = published
      .filter((e) => e.payload.statusId === s.id || e.payload.reblogOfId === s.id)
      .map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'FavouriteCreated',
        'ReblogCreated',
        'StatusPinned',
        'ConversationMuted',
        'FavouriteDeleted',
        'ReblogDeleted',
        'StatusUnpinned',
        'ConversationUnmuted',
      ]),
    );
  });

  it('limits pins to five and refuses direct statuses', async () => {
    const carol = await createTestUser(core);
    const direct = (await call('POST', '/api/v1/statuses', carol.token, { status: 'psst', visibility: 'direct' })).body;
    expect((await call('POST', `/api/v1/statuses/${direct.id}/pin`, carol.token)).status).toBe(422);
    const priv = (await call('POST', '/api/v1/statuses', carol.token, { status: 'private pin', visibility: 'private' }))
      .body;
    expect((await call('POST', `/api/v1/statuses/${priv.id}/pin`, carol.token)).body.pinned).toBe(true);
    for (let i = 0; i < 4; i++) {
      const s = (await call('POST', '/api/v1/statuses', carol.token, { status: `pin ${i}` })).body;
      expect((await call('POST', `/api/v1/statuses/${s.id}/pin`, carol.token)).status).toBe(200);
    }
    const sixth = (await call('POST', '/api/v1/statuses', carol.token, { status: 'one too many' })).body;
    const res = await call('POST', `/api/v1/statuses/${sixth.id}/pin`, carol.token);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('Validation failed: You have already pinned the maximum number of posts');
  });

  it('lists favourites and bookmarks with Link headers by record id', async () => {
    const dave = await createTestUser(core);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = (await call('POST', '/api/v1/statuses', alice.token, { status: `fav ${i}` })).body;
      ids.push(s.id);
      await call('POST', `/api/v1/statuses/${s.id}/favourite`, dave.token);
      await call('POST', `/api/v1/statuses/${s.id}/bookmark`, dave.token);
    }
    const page1 = await call('GET', '/api/v1/favourites?limit=2', dave.token);
    expect(page1.body.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const link = page1.headers.get('link') ?? '';
    expect(link).toContain('rel="next"');
    expect(link).toContain('rel="prev"');
    const next = /<([^>]+)>; rel="next"/.exec(link)?.[1] ?? '';
    const page2 = await call('GET', new URL(next).pathname + new URL(next).search, dave.token);
    expect(page2.body.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(page2.headers.get('link')).not.toContain('rel="next"');
    const prev = /<([^>]+)>; rel="prev"/.exec(link)?.[1] ?? '';
    const newer = await call('GET', new URL(prev).pathname + new URL(prev).search, dave.token);
    expect(newer.body).toEqual([]);
    expect(newer.headers.get('link')).toBeNull();
    const marks = await call('GET', '/api/v1/bookmarks', dave.token);
    expect(marks.body.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(marks.headers.get('link')).not.toContain('rel="next"');
    expect((await call('GET', '/api/v1/bookmarks', null)).status).toBe(401);
  });

  it('lets undo actions work after losing access or being blocked', async () => {
    const erin = await createTestUser(core);
    await recordFollow(core, erin.account._id, alice.account._id);
    const priv = (
      await call('POST', '/api/v1/statuses', alice.token, { status: 'followers only', visibility: 'private' })
    ).body;
    expect((await call('POST', `/api/v1/statuses/${priv.id}/favourite`, erin.token)).body.favourited).toBe(true);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/bookmark`, erin.token)).body.bookmarked).toBe(true);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/reblog`, erin.token)).status).toBe(403);
    await core.db.collection('follows').deleteMany({ accountId: erin.account._id });
    expect((await call('GET', `/api/v1/statuses/${priv.id}`, erin.token)).status).toBe(404);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/favourite`, erin.token)).status).toBe(404);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/unfavourite`, erin.token)).body.favourited).toBe(false);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/unbookmark`, erin.token)).body.bookmarked).toBe(false);
    expect((await call('POST', `/api/v1/statuses/${priv.id}/unfavourite`, erin.token)).status).toBe(404);
  });

  it('lets unreblog and unbookmark work when blocked by the author', async () => {
    const fay = await createTestUser(core);
    const s = (await call('POST', '/api/v1/statuses', alice.token, { status: 'soon blocked' })).body;
    expect((await call('POST', `/api/v1/statuses/${s.id}/reblog`, fay.token)).status).toBe(200);
    expect((await call('POST', `/api/v1/statuses/${s.id}/bookmark`, fay.token)).status).toBe(200);
    await recordBlock(core, alice.account._id, fay.account._id);
    expect((await call('GET', `/api/v1/statuses/${s.id}`, fay.token)).status).toBe(404);
    expect((await call('POST', `/api/v1/statuses/${s.id}/unreblog`, fay.token)).body).toMatchObject({
      id: s.id,
      reblogged: false,
    });
    expect((await call('POST', `/api/v1/statuses/${s.id}/unbookmark`, fay.token)).body).toMatchObject({
      id: s.id,
      bookmarked: false,
    });
    expect((await call('POST', `/api/v1/statuses/${s.id}/reblog`, fay.token)).status).toBe(404);
  });

  it('refuses to mute a status without a conversation', async () => {
    const s = (await call('POST', '/api/v1/statuses', alice.token, { status: 'no thread' })).body;
    await collection(core.db, statuses).updateOne({ _id: BigInt(s.id) }, { $set: { conversationId: null } });
    const res = await call('POST', `/api/v1/statuses/${s.id}/mute`, bob.token);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^Validation failed: /);
  });
});

describe('context limits', () => {
  it('gives logged-out callers at most 20 levels of descendants', async () => {
    const root = await postStatus(core, alice.account, { text: 'deep thread' });
    let parent = root;
    for (let i = 0; i < 22; i++)
      parent = await postStatus(core, i % 2 ? alice.account : bob.account, {
        text: `level ${i + 1}`,
        inReplyToId: parent._id,
      });
    const anonymous = await call('GET', `/api/v1/statuses/${root._id}/context`, null);
    expect(anonymous.body.descendants).toHaveLength(20);
    const signedIn = await call('GET', `/api/v1/statuses/${root._id}/context`, bob.token);
    expect(signedIn.body.descendants).toHaveLength(22);
    const leaf = await call('GET', `/api/v1/statuses/${parent._id}/context`, null);
    expect(leaf.body.ancestors).toHaveLength(22);
    expect(leaf.body.ancestors[0].id).toBe(String(root._id));
  });
});
