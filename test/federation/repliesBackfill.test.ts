// Thread backfill between two instances of this server: B learns of a post on A without its
// replies, then (1) the Note's embedded first page brings the author's own reply through B's
// `replies` pipeline, and (2) a signed-in user opening the thread on B crawls A's replies
// collection page by page (other accounts' replies, nested ones), announced by
// `Mastodon-Async-Refresh` and read back at /api/v1_alpha/async_refreshes/:id.
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { settles, startInstance, type Instance } from './support.ts';
import { runRepliesPipeline } from '../../pipelines/replies/index.ts';
import { consumerTuning } from '../support/kafka.ts';

jest.setTimeout(120_000);

describe('replies backfill between two instances', () => {
  let a: Instance;
  let b: Instance;
  let replies: { stop(): Promise<void> } | null = null;
  let alice: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startInstance(),
      startInstance({ env: { FETCH_REPLIES_INITIAL_WAIT_MINUTES: '0', FETCH_REPLIES_COOLDOWN_MINUTES: '15' } }),
    ]);
    replies = await runRepliesPipeline(b.core, consumerTuning);
    alice = await createTestUser(a.core, { username: 'alice' });
    carol = await createTestUser(a.core, { username: 'carol' });
    dave = await createTestUser(a.core, { username: 'dave' });
    bob = await createTestUser(b.core, { username: 'bob' });
  });

  afterAll(async () => {
    await replies?.stop();
    await Promise.all([a?.close(), b?.close()]);
  });

  const post = async (user: TestUser, status: string, inReplyTo?: string): Promise<{ id: string; uri: string }> => {
    const res = await a.call('POST', '/api/v1/statuses', user.token, {
      status,
      ...(inReplyTo ? { in_reply_to_id: inReplyTo } : {}),
    });
    expect(res.status).toBe(200);
    return res.body as { id: string; uri: string };
  };
  const contentsOf = (list: Array<{ content: string }>) => list.map((s) => s.content.replace(/<[^>]+>/g, ''));

  it('fetches the first page when a status is stored, and the whole thread when it is opened', async () => {
    const root = await post(alice, 'thread root');
    await post(alice, 'more from alice', root.id);
    const other = await post(carol, 'carol answers', root.id);
    await post(dave, 'dave answers carol', other.id);

    // bob looks the post up: B stores it with no replies, then the replies pipeline fetches the
    // self-reply named in the Note's embedded first page. Logged out, opening the thread crawls nothing.
    const found = await b.call(
      'GET',
      `/api/v2/search?resolve=true&type=statuses&q=${encodeURIComponent(root.uri)}`,
      bob.token,
    );
    expect(found.body.statuses).toHaveLength(1);
    const rootOnB = found.body.statuses[0].id as string;
    await settles(
      async () => {
        const ctx = await b.call('GET', `/api/v1/statuses/${rootOnB}/context`);
        expect(ctx.headers.get('mastodon-async-refresh')).toBeNull();
        expect(contentsOf(ctx.body.descendants)).toEqual(['more from alice']);
      },
      30_000,
      'self-reply from the first page',
    );

    // Signed in, opening the thread starts a crawl of A's replies collection.
    const opened = await b.call('GET', `/api/v1/statuses/${rootOnB}/context`, bob.token);
    expect(opened.status).toBe(200);
    const header = opened.headers.get('mastodon-async-refresh');
    expect(header).toMatch(/^id="[^"]+", retry=3$/);
    const refreshId = /id="([^"]+)"/.exec(header!)![1];
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1_alpha/async_refreshes/${encodeURIComponent(refreshId)}`, bob.token);
        expect(res.status).toBe(200);
        expect(res.body.async_refresh).toMatchObject({ id: refreshId, status: 'finished' });
      },
      30_000,
      'refresh finished',
    );
    const ctx = await b.call('GET', `/api/v1/statuses/${rootOnB}/context`, bob.token);
    expect(contentsOf(ctx.body.descendants).sort()).toEqual(['carol answers', 'dave answers carol', 'more from alice']);
    // Within the cooldown a second open crawls nothing.
    expect(ctx.headers.get('mastodon-async-refresh')).toBeNull();

    // Unknown or forged refresh ids are 404; the endpoint needs a token.
    const forged = `${refreshId.split('--')[0]}--${'A'.repeat(43)}`;
    expect((await b.call('GET', `/api/v1_alpha/async_refreshes/${forged}`, bob.token)).status).toBe(404);
    expect((await b.call('GET', `/api/v1_alpha/async_refreshes/${encodeURIComponent(refreshId)}`)).status).toBe(401);
  });
});
