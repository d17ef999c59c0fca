// Two instances of this server federating over HTTP on loopback, each with its own database,
// Redis namespace and topics, ingress (inbox) and delivery pipelines: follow (auto-accepted), post,
// reply with a mention, favourite, reblog, edit, delete, unfollow and block, each seen through the
// other side's REST API (timelines, notifications, statuses, accounts, polls), plus a profile
// update and a poll vote.
import { collection } from '../../services/core/db/mongo.ts';
import { blocks } from '../../services/core/model/blocks.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { settles, startFederatingPair, type FederatingPair, type Instance } from './support.ts';

jest.setTimeout(180_000);

describe('two instances federating', () => {
  let a: Instance;
  let b: Instance;
  let pair: FederatingPair | undefined;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    pair = await startFederatingPair();
    ({ a, b } = pair);
    alice = await createTestUser(a.core, { username: 'alice' });
    bob = await createTestUser(b.core, { username: 'bob' });
  });

  afterAll(async () => {
    await pair?.close();
  });

  it('follow, post, reply, favourite, reblog, edit, delete, unfollow, block', async () => {
    // bob finds alice by her handle and follows her; her server accepts.
    const lookup = await b.call('GET', `/api/v1/accounts/lookup?acct=alice@${a.domain}`, bob.token);
    expect(lookup.status).toBe(200);
    const aliceOnB = lookup.body.id as string;
    expect((await b.call('POST', `/api/v1/accounts/${aliceOnB}/follow`, bob.token)).status).toBe(200);
    await settles(
      async () => {
        const rel = await b.call('GET', `/api/v1/accounts/relationships?id[]=${aliceOnB}`, bob.token);
        expect(rel.body[0]).toMatchObject({ following: true, requested: false });
      },
      30_000,
      'follow accepted',
    );
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/accounts/${alice.account._id}/followers`, alice.token);
        expect(res.body.map((x: { acct: string }) => x.acct)).toContain(`bob@${b.domain}`);
      },
      30_000,
      'bob among alice followers',
    );

    // alice posts: it lands in bob's home timeline.
    const post = await a.call('POST', '/api/v1/statuses', alice.token, { status: 'hello from A' });
    expect(post.status).toBe(200);
    const postUri = post.body.uri as string;
    const postOnB = await settles(
      async () => {
        const home = await b.call('GET', '/api/v1/timelines/home', bob.token);
        const found = (home.body as Array<{ id: string; uri: string }>).find((s) => s.uri === postUri);
        expect(found).toBeDefined();
        return found!.id;
      },
      30_000,
      "alice's post in bob's home timeline",
    );

    // Search with resolve=true finds the remote account by handle and the post by its URI.
    const found = await b.call(
      'GET',
      `/api/v2/search?resolve=true&q=${encodeURIComponent(`@alice@${a.domain}`)}&type=accounts`,
      bob.token,
    );
    expect(found.body.accounts.map((x: { id: string }) => x.id)).toEqual([aliceOnB]);
    const byUri = await b.call('GET', `/api/v2/search?resolve=true&q=${encodeURIComponent(postUri)}`, bob.token);
    expect(byUri.body.statuses.map((x: { id: string }) => x.id)).toEqual([postOnB]);

    // bob replies mentioning alice: alice is notified of the mention.
    const reply = await b.call('POST', '/api/v1/statuses', bob.token, {
      status: `@alice@${a.domain} hi back`,
      in_reply_to_id: postOnB,
    });
    expect(reply.status).toBe(200);
    const replyOnA = await settles(
      async () => {
        const notes = await a.call('GET', '/api/v1/notifications?types[]=mention', alice.token);
        const n = (notes.body as Array<{ status: { id: string; uri: string } }>).find(
          (x) => x.status.uri === reply.body.uri,
        );
        expect(n).toBeDefined();
        return n!.status.id;
      },
      30_000,
      'mention notification on A',
    );

    // alice favourites and reblogs the reply: bob is notified of both.
    expect((await a.call('POST', `/api/v1/statuses/${replyOnA}/favourite`, alice.token)).status).toBe(200);
    expect((await a.call('POST', `/api/v1/statuses/${replyOnA}/reblog`, alice.token)).status).toBe(200);
    await settles(
      async () => {
        const notes = await b.call('GET', '/api/v1/notifications', bob.token);
        const types = (notes.body as Array<{ type: string; account: { acct: string } }>)
          .filter((n) => n.account.acct === `alice@${a.domain}`)
          .map((n) => n.type);
        expect(types).toEqual(expect.arrayContaining(['favourite', 'reblog']));
      },
      30_000,
      'favourite and reblog notifications on B',
    );

    // alice edits her post: bob's copy changes; then she deletes it: bob's copy is gone.
    expect(
      (await a.call('PUT', `/api/v1/statuses/${post.body.id as string}`, alice.token, { status: 'hello, edited' }))
        .status,
    ).toBe(200);
    await settles(
      async () => {
        const s = await b.call('GET', `/api/v1/statuses/${postOnB}`, bob.token);
        expect(s.body.content).toContain('edited');
      },
      30_000,
      'edit seen on B',
    );
    expect((await a.call('DELETE', `/api/v1/statuses/${post.body.id as string}`, alice.token)).status).toBe(200);
    await settles(
      async () => {
        expect((await b.call('GET', `/api/v1/statuses/${postOnB}`, bob.token)).status).toBe(404);
      },
      30_000,
      'delete seen on B',
    );

    // alice changes her display name: bob's server shows the new one.
    expect(
      (await a.call('PATCH', '/api/v1/accounts/update_credentials', alice.token, { display_name: 'Alice of A' }))
        .status,
    ).toBe(200);
    await settles(
      async () => {
        const acc = await b.call('GET', `/api/v1/accounts/${aliceOnB}`, bob.token);
        expect(acc.body.display_name).toBe('Alice of A');
      },
      30_000,
      'profile update seen on B',
    );

    // alice posts a poll; bob votes on his server: her poll counts his vote.
    const poll = await a.call('POST', '/api/v1/statuses', alice.token, {
      status: 'tea or coffee?',
      poll: { options: ['tea', 'coffee'], expires_in: 3600 },
    });
    expect(poll.status).toBe(200);
    const pollOnB = await settles(
      async () => {
        const home = await b.call('GET', '/api/v1/timelines/home', bob.token);
        const found = (home.body as Array<{ uri: string; poll: { id: string } | null }>).find(
          (x) => x.uri === poll.body.uri,
        );
        expect(found?.poll).toBeTruthy();
        return found!.poll!.id;
      },
      30_000,
      'poll on B',
    );
    expect((await b.call('POST', `/api/v1/polls/${pollOnB}/votes`, bob.token, { choices: ['1'] })).status).toBe(200);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/polls/${poll.body.poll.id as string}`, alice.token);
        expect(res.body.votes_count).toBe(1);
        expect(res.body.options[1].votes_count).toBe(1);
      },
      30_000,
      'vote counted on A',
    );

    // bob unfollows: alice loses a follower.
    expect((await b.call('POST', `/api/v1/accounts/${aliceOnB}/unfollow`, bob.token)).status).toBe(200);
    await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/accounts/${alice.account._id}/followers`, alice.token);
        expect(res.body).toHaveLength(0);
      },
      30_000,
      'unfollow seen on A',
    );

    // alice blocks bob: B records that alice blocks him, so bob may not follow her again.
    const bobOnA = await a.call('GET', `/api/v1/accounts/lookup?acct=bob@${b.domain}`, alice.token);
    expect(bobOnA.status).toBe(200);
    expect((await a.call('POST', `/api/v1/accounts/${bobOnA.body.id as string}/block`, alice.token)).status).toBe(200);
    await settles(
      async () => {
        const n = await collection(b.core.db, blocks).countDocuments({
          accountId: BigInt(aliceOnB),
          targetAccountId: bob.account._id,
        });
        expect(n).toBe(1);
      },
      30_000,
      'block seen on B',
    );
    expect((await b.call('POST', `/api/v1/accounts/${aliceOnB}/follow`, bob.token)).status).toBe(403);
  });
});
