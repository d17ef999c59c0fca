// Polls over real HTTP: reading (visibility of the status decides; non-public needs a token),
// voting (single and multiple choice, the 422s), counts, own_votes, hide_totals, closing by the
// scheduler's poll-expiry job and the events of both.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses, type Visibility } from '../../../services/core/model/statuses.ts';
import { polls } from '../../../services/core/model/polls.ts';
import { closeExpiredPolls, validatePollInput, replacePoll } from '../../../services/core/polls/polls.ts';
import { runScheduler } from '../../../pipelines/scheduler/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { eventually } from '../../support/core.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';

describe('polls API', () => {
  let api: TestApi;
  let core: Core;
  let call: JsonClient;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let published: OutboxEvent[];

  /** A status with a poll, posted through the statuses API. */
  async function statusWithPoll(
    author: TestUser,
    opts: { visibility?: Visibility; text?: string; multiple?: boolean; hideTotals?: boolean; expiresIn?: number } = {},
  ) {
    const res = await call('POST', '/api/v1/statuses', author.token, {
      status: opts.text ?? 'Which one?',
      visibility: opts.visibility ?? 'public',
      poll: {
        options: ['red', 'green', 'blue'],
        expires_in: opts.expiresIn ?? 3600,
        multiple: opts.multiple ?? false,
        hide_totals: opts.hideTotals ?? false,
      },
    });
    expect(res.status).toBe(200);
    const poll = await collection(core.db, polls).findOne({ _id: BigInt(res.body.poll.id) });
    if (!poll) throw new Error('poll not stored');
    const status = await collection(core.db, statuses).findOne({ _id: BigInt(res.body.id) });
    expect(status?.pollId).toBe(poll._id);
    return { status: status!, poll, pollPath: `/api/v1/polls/${poll._id}`, entity: res.body };
  }

  beforeAll(async () => {
    api = await startTestApi();
    ({ core, published, call } = api);
    alice = await createTestUser(core, { username: 'alice' });
    bob = await createTestUser(core, { username: 'bob' });
    carol = await createTestUser(core, { username: 'carol' });
  });

  afterAll(() => api?.close());

  it('validates poll input with Mastodon wording', () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ options: ['only'], expiresIn: 600 }, 'Validation failed: Poll options must have more than one item'],
      [
        { options: ['a', 'b', 'c', 'd', 'e'], expiresIn: 600 },
        "Validation failed: Poll options can't contain more than 4 items",
      ],
      [
        { options: ['a', 'x'.repeat(51)], expiresIn: 600 },
        'Validation failed: Poll options cannot be longer than 50 characters each',
      ],
      [{ options: ['a', 'a'], expiresIn: 600 }, 'Validation failed: Poll options contain duplicate items'],
      [{ options: ['a', 'b'], expiresIn: 299 }, 'Validation failed: Poll expires at is too soon'],
      [{ options: ['a', 'b'], expiresIn: 2_629_747 }, 'Validation failed: Poll expires at is too far into the future'],
      [{ options: ['a', 'b'], expiresIn: 'soon' }, 'Validation failed: Poll expires at is invalid'],
    ];
    for (const [input, message] of bad) expect(() => validatePollInput(input)).toThrow(message);
    expect(
      validatePollInput({ options: { 0: 'a', 1: 'b' }, expiresIn: '300', multiple: 'false', hideTotals: '1' }),
    ).toEqual({
      options: ['a', 'b'],
      expiresIn: 300,
      multiple: false,
      hideTotals: true,
    });
  });

  it('reads a public poll without a token; viewer fields only with one', async () => {
    const { pollPath, poll, entity } = await statusWithPoll(alice);
    const anon = await call('GET', pollPath, null);
    // The status carries the same poll (the author's view of it).
    expect(entity.poll).toMatchObject({ id: String(poll._id), options: anon.body.options, voted: true });
    expect(anon.status).toBe(200);
    expect(anon.body).toEqual({
      id: String(poll._id),
      expires_at: poll.expiresAt!.toISOString(),
      expired: false,
      multiple: false,
      votes_count: 0,
      voters_count: 0,
      options: [
        { title: 'red', votes_count: 0 },
        { title: 'green', votes_count: 0 },
        { title: 'blue', votes_count: 0 },
      ],
      emojis: [],
    });
    const own = await call('GET', pollPath, alice.token);
    expect(own.body).toMatchObject({ voted: true, own_votes: [] });
    const other = await call('GET', pollPath, bob.token);
    expect(other.body).toMatchObject({ voted: false, own_votes: [] });
    expect((await call('GET', '/api/v1/polls/987654321', null)).status).toBe(404);
  });

  it('votes once on a single-choice poll and counts it; refuses second votes, own polls, bad choices', async () => {
    const { pollPath, poll } = await statusWithPoll(alice);
    const vote = await call('POST', `${pollPath}/votes`, bob.token, { choices: ['1'] });
    expect(vote.status).toBe(200);
    expect(vote.body).toMatchObject({ votes_count: 1, voted: true, own_votes: [1] });
    expect(vote.body.options[1]).toEqual({ title: 'green', votes_count: 1 });
    const event = published.find((e) => e.type === 'PollVoted' && e.payload.pollId === String(poll._id));
    expect(event?.payload).toMatchObject({
      accountId: String(bob.account._id),
      pollAccountId: String(alice.account._id),
      choices: [1],
      optionTitles: ['green'],
      local: true,
    });

    const again = await call('POST', `${pollPath}/votes`, bob.token, { choices: ['2'] });
    expect(again.status).toBe(422);
    expect(again.body.error).toBe('Validation failed: You have already voted on this poll');
    const self = await call('POST', `${pollPath}/votes`, alice.token, { choices: ['0'] });
    expect(self.status).toBe(422);
    expect(self.body.error).toBe('Validation failed: You cannot vote in your own polls');
    expect((await call('POST', `${pollPath}/votes`, carol.token, { choices: ['7'] })).status).toBe(422);
    expect((await call('POST', `${pollPath}/votes`, carol.token, { choices: ['0', '1'] })).status).toBe(422);
    expect((await call('POST', `${pollPath}/votes`, carol.token, { choices: [] })).status).toBe(400); // Rails' params.require: blank is missing
    expect((await call('POST', `${pollPath}/votes`, null, { choices: ['0'] })).status).toBe(401);
    const readOnly = await createTestUser(core, { scopes: ['read'] });
    expect((await call('POST', `${pollPath}/votes`, readOnly.token, { choices: ['0'] })).status).toBe(403);
  });

  it('stops concurrent double votes with the unique index', async () => {
    const { pollPath } = await statusWithPoll(alice);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call('POST', `${pollPath}/votes`, carol.token, { choices: ['0'] })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422)).toHaveLength(7);
    expect((await call('GET', pollPath, null)).body.votes_count).toBe(1);
  });

  it('counts concurrent votes of many accounts exactly', async () => {
    const { pollPath } = await statusWithPoll(alice, { multiple: true });
    const voters = await Promise.all(Array.from({ length: 12 }, () => createTestUser(core)));
    const results = await Promise.all(
      voters.map((v, i) => call('POST', `${pollPath}/votes`, v.token, { choices: i % 2 === 0 ? ['0', '1'] : ['2'] })),
    );
    expect(results.map((r) => r.status)).toEqual(voters.map(() => 200));
    const res = await call('GET', pollPath, null);
    expect(res.body).toMatchObject({ votes_count: 18, voters_count: 12 });
    expect(res.body.options.map((o: { votes_count: number }) => o.votes_count)).toEqual([6, 6, 6]);
  });

  it('counts choices and voters on a multiple-choice poll', async () => {
    const { pollPath } = await statusWithPoll(alice, { multiple: true });
    await call('POST', `${pollPath}/votes`, bob.token, { choices: ['0', '2'] });
    const res = await call('POST', `${pollPath}/votes`, carol.token, { choices: ['2'] });
    expect(res.body).toMatchObject({ multiple: true, votes_count: 3, voters_count: 2, own_votes: [2] });
    expect(res.body.options.map((o: { votes_count: number }) => o.votes_count)).toEqual([1, 0, 2]);
  });

  it('hides totals until the end except from the author', async () => {
    const { pollPath, poll } = await statusWithPoll(alice, { hideTotals: true });
    await call('POST', `${pollPath}/votes`, bob.token, { choices: ['0'] });
    const voter = await call('GET', pollPath, bob.token);
    expect(voter.body.options.every((o: { votes_count: number | null }) => o.votes_count === null)).toBe(true);
    expect(voter.body.votes_count).toBe(1);
    const author = await call('GET', pollPath, alice.token);
    expect(author.body.options[0].votes_count).toBe(1);
    await collection(core.db, polls).updateOne({ _id: poll._id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const ended = await call('GET', pollPath, bob.token);
    expect(ended.body.expired).toBe(true);
    expect(ended.body.options[0].votes_count).toBe(1);
  });

  it('needs a token and the right to see the status for a non-public poll', async () => {
    const { pollPath } = await statusWithPoll(alice, { visibility: 'private', text: 'For @bob and followers' });
    expect((await call('GET', pollPath, null)).status).toBe(404);
    expect((await call('GET', pollPath, carol.token)).status).toBe(404);
    expect((await call('POST', `${pollPath}/votes`, carol.token, { choices: ['0'] })).status).toBe(404);
    expect((await call('GET', pollPath, alice.token)).status).toBe(200);
    const mentioned = await call('POST', `${pollPath}/votes`, bob.token, { choices: ['0'] });
    expect(mentioned.status).toBe(200);
    const direct = await statusWithPoll(alice, { visibility: 'direct', text: 'Only @carol' });
    expect((await call('GET', direct.pollPath, bob.token)).status).toBe(404);
    expect((await call('GET', direct.pollPath, carol.token)).status).toBe(200);
  });

  it('closes expired polls in the scheduler (once, with PollExpired) and refuses votes after', async () => {
    const { pollPath, poll } = await statusWithPoll(alice, { expiresIn: 300 });
    await call('POST', `${pollPath}/votes`, bob.token, { choices: ['2'] });
    // Two concurrent closers at a time after the end: one PollExpired.
    const later = new Date(Date.now() + 301_000);
    const [a, b] = await Promise.all([
      closeExpiredPolls(core, { now: later }),
      closeExpiredPolls(core, { now: later }),
    ]);
    expect(a + b).toBeGreaterThanOrEqual(1);
    const expiredEvents = published.filter((e) => e.type === 'PollExpired' && e.payload.pollId === String(poll._id));
    expect(expiredEvents).toHaveLength(1);
    expect(expiredEvents[0].payload).toMatchObject({
      statusId: String(poll.statusId),
      accountId: String(alice.account._id),
    });
    const closed = await call('GET', pollPath, bob.token);
    expect(closed.body).toMatchObject({ expired: true, votes_count: 1, own_votes: [2] });
    const late = await call('POST', `${pollPath}/votes`, carol.token, { choices: ['0'] });
    expect(late.status).toBe(422);
    expect(late.body.error).toBe('Validation failed: The poll has already ended');
  });

  it('runs poll expiry from the scheduler loop', async () => {
    const { poll } = await statusWithPoll(alice);
    await collection(core.db, polls).updateOne({ _id: poll._id }, { $set: { expiresAt: new Date(Date.now() - 10) } });
    const scheduler = runScheduler(core, { intervalMs: 50 });
    try {
      const closedAt = await eventually(
        async () => (await collection(core.db, polls).findOne({ _id: poll._id }))?.closedAt ?? undefined,
        10_000,
        'the poll to close',
      );
      expect(closedAt).toBeInstanceOf(Date);
    } finally {
      await scheduler.stop();
    }
  });

  it('keeps votes when an edit keeps the options and resets them when they change', async () => {
    const { poll, status, pollPath } = await statusWithPoll(alice);
    await call('POST', `${pollPath}/votes`, bob.token, { choices: ['0'] });
    const same = await replacePoll(core, {
      pollId: poll._id,
      statusId: status._id,
      accountId: alice.account._id,
      options: ['red', 'green', 'blue'],
      expiresIn: 600,
      multiple: false,
      hideTotals: true,
    });
    expect(same.votesReset).toBe(false);
    expect((await call('GET', pollPath, bob.token)).body).toMatchObject({ votes_count: 1, own_votes: [0] });
    const changed = await replacePoll(core, {
      pollId: poll._id,
      statusId: status._id,
      accountId: alice.account._id,
      options: ['red', 'yellow'],
      expiresIn: 600,
      multiple: false,
      hideTotals: false,
    });
    expect(changed.votesReset).toBe(true);
    expect(changed._id).toBe(poll._id);
    const res = await call('GET', pollPath, bob.token);
    expect(res.body).toMatchObject({ votes_count: 0, voted: false, own_votes: [] });
    expect(res.body.options).toEqual([
      { title: 'red', votes_count: 0 },
      { title: 'yellow', votes_count: 0 },
    ]);
    // Bob may vote again on the new question.
    expect((await call('POST', `${pollPath}/votes`, bob.token, { choices: ['1'] })).status).toBe(200);
  });
});
