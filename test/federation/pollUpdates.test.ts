// A vote on a local poll reaches the servers that have the Question soon after, not only when the
// poll closes: the scheduler sends one Update of the Question POLL_UPDATE_DELAY after the first
// vote of a run (Mastodon's DistributePollUpdateWorker, 3 minutes there, 3 seconds here), for
// votes cast on this server and votes received from others alike. Two instances of this server.
import { runScheduler } from '../../pipelines/scheduler/index.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { polls } from '../../services/core/model/polls.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { settles, startFederatingPair, type FederatingPair, type Instance } from './support.ts';

jest.setTimeout(180_000);

describe('poll updates after votes', () => {
  let a: Instance;
  let b: Instance;
  const running: Array<{ stop(): Promise<void> }> = [];
  let pair: FederatingPair | undefined;
  let alice: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    pair = await startFederatingPair({ a: { env: { POLL_UPDATE_DELAY: '3' } } });
    ({ a, b } = pair);
    running.push(runScheduler(a.core, { intervalMs: 200 }));
    alice = await createTestUser(a.core, { username: 'alice' });
    carol = await createTestUser(a.core, { username: 'carol' });
    dave = await createTestUser(a.core, { username: 'dave' });
    bob = await createTestUser(b.core, { username: 'bob' });
  });

  afterAll(async () => {
    for (const r of running) await r.stop();
    await pair?.close();
  });

  it('sends one Update of the Question a while after a run of votes, local and remote', async () => {
    const lookup = await b.call('GET', `/api/v1/accounts/lookup?acct=alice@${a.domain}`, bob.token);
    expect((await b.call('POST', `/api/v1/accounts/${lookup.body.id as string}/follow`, bob.token)).status).toBe(200);
    await settles(
      async () => {
        const rel = await b.call('GET', `/api/v1/accounts/relationships?id[]=${lookup.body.id as string}`, bob.token);
        expect(rel.body[0]).toMatchObject({ following: true });
      },
      30_000,
      'follow accepted',
    );
    const poll = await a.call('POST', '/api/v1/statuses', alice.token, {
      status: 'tea or coffee?',
      poll: { options: ['tea', 'coffee'], expires_in: 3600 },
    });
    expect(poll.status).toBe(200);
    const pollId = poll.body.poll.id as string;
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
    const countsOnB = async () => (await b.call('GET', `/api/v1/polls/${pollOnB}`, bob.token)).body;

    // Two votes on A in a row: one Update is due, three seconds after the first.
    const votedAt = Date.now();
    expect((await a.call('POST', `/api/v1/polls/${pollId}/votes`, carol.token, { choices: ['0'] })).status).toBe(200);
    expect((await a.call('POST', `/api/v1/polls/${pollId}/votes`, dave.token, { choices: ['1'] })).status).toBe(200);
    const pending = await collection(a.core.db, polls).findOne({ _id: BigInt(pollId) });
    expect(pending?.updateDueAt?.getTime()).toBeGreaterThanOrEqual(votedAt + 3000);
    expect(pending!.updateDueAt!.getTime()).toBeLessThan(Date.now() + 3000);
    expect((await countsOnB()).votes_count).toBe(0);
    const updated = await settles(
      async () => {
        const counts = await countsOnB();
        expect(counts).toMatchObject({ votes_count: 2, voters_count: 2 });
        return counts;
      },
      30_000,
      'counts on B after the Update',
    );
    expect(updated.options.map((o: { votes_count: number }) => o.votes_count)).toEqual([1, 1]);
    const requested = () => a.published.filter((e) => e.type === 'PollUpdateRequested').length;
    expect(requested()).toBe(1);

    // bob votes on B: A counts it and, a while later, B's copy shows A's counts.
    expect((await b.call('POST', `/api/v1/polls/${pollOnB}/votes`, bob.token, { choices: ['0'] })).status).toBe(200);
    await settles(
      async () => {
        const counts = await countsOnB();
        expect(counts.votes_count).toBe(3);
        expect(counts.options.map((o: { votes_count: number }) => o.votes_count)).toEqual([2, 1]);
      },
      30_000,
      'remote vote counted and sent back',
    );
    expect(requested()).toBe(2);
    expect((await collection(a.core.db, polls).findOne({ _id: BigInt(pollId) }))?.updateDueAt ?? null).toBeNull();
  });
});
