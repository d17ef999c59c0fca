// Polls in ActivityPub: our poll as Question members (oneOf/anyOf, counts, endTime/closed), remote
// Questions read into polls and refreshed, vote Notes for remote polls, remote votes on ours.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { polls } from '../../../services/core/model/polls.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { findPoll, votePoll } from '../../../services/core/polls/polls.ts';
import {
  pollToActivityPub,
  recordRemoteVote,
  remotePollFrom,
  upsertRemotePoll,
  voteNotes,
} from '../../../services/core/polls/activitypub.ts';
import { presentPoll } from '../../../services/core/entities/poll.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

describe('polls in ActivityPub', () => {
  let core: Core;

  beforeAll(async () => {
    ({ core } = await createTestCore());
  });

  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('renders our polls as Question members and counts remote votes by option name', async () => {
    const alice = await createTestUser(core);
    const bob = await createTestUser(core);
    const status = await postStatus(core, alice.account, {
      text: 'Best tomato?',
      poll: { options: ['Cherry', 'Beefsteak'], expiresIn: 3600, multiple: false, hideTotals: false },
    });
    const poll = (await findPoll(core, status.pollId!))!;
    await votePoll(core, bob.account, poll, [0]);
    const q = await pollToActivityPub(core, poll);
    expect(q).toEqual({
      endTime: poll.expiresAt!.toISOString(),
      votersCount: 1,
      oneOf: [
        { type: 'Note', name: 'Cherry', replies: { type: 'Collection', totalItems: 1 } },
        { type: 'Note', name: 'Beefsteak', replies: { type: 'Collection', totalItems: 0 } },
      ],
    });

    // A remote voter (an account with a domain): counted once per option title, only valid ones.
    const carol = await createTestUser(core);
    const remote = { ...carol.account, domain: 'remote.example' };
    expect(await recordRemoteVote(core, remote, poll, 'Beefsteak', 'https://remote.example/votes/1')).toBe(true);
    expect(await recordRemoteVote(core, remote, poll, 'Cherry', 'https://remote.example/votes/2')).toBe(false);
    expect(await recordRemoteVote(core, bob.account, poll, 'No such option', null)).toBe(false);
    expect((await presentPoll(core, poll, null)).options.map((o) => o.votes_count)).toEqual([1, 1]);

    await collection(core.db, polls).updateOne(
      { _id: poll._id },
      { $set: { closedAt: new Date(), tallies: [1, 1], votesCount: 2, votersCount: 2 } },
    );
    const closed = await pollToActivityPub(core, (await findPoll(core, poll._id))!);
    expect(closed.closed).toEqual(expect.any(String));
    expect(await recordRemoteVote(core, bob.account, (await findPoll(core, poll._id))!, 'Cherry', null)).toBe(false);
  });

  it('reads remote Questions into polls, refreshes them, and builds vote Notes', async () => {
    const author = await createTestUser(core);
    const status = await postStatus(core, author.account, { text: 'stand-in for a remote status' });
    const question = {
      type: 'Question',
      endTime: '2031-03-06T12:00:00Z',
      votersCount: 9,
      anyOf: [
        { type: 'Note', name: 'Cherry', replies: { type: 'Collection', totalItems: 6 } },
        { type: 'Note', content: 'Beefsteak', replies: { totalItems: -3 } },
        { type: 'Note' },
      ],
    };
    const input = remotePollFrom(question)!;
    expect(input).toMatchObject({
      options: ['Cherry', 'Beefsteak'],
      tallies: [6, 0],
      multiple: true,
      votersCount: 9,
      closedAt: null,
    });
    expect(remotePollFrom({ type: 'Note' })).toBeNull();
    const poll = await upsertRemotePoll(core, status._id, author.account._id, input);
    expect(await presentPoll(core, poll, null)).toMatchObject({
      multiple: true,
      votes_count: 6,
      voters_count: 9,
      expired: false,
      expires_at: '2031-03-06T12:00:00.000Z',
    });
    const refreshed = await upsertRemotePoll(
      core,
      status._id,
      author.account._id,
      remotePollFrom({ ...question, closed: true, votersCount: 10 })!,
    );
    expect(refreshed._id).toBe(poll._id);
    expect(await presentPoll(core, refreshed, null)).toMatchObject({ expired: true, voters_count: 10 });

    expect(
      voteNotes(poll, [0, 1], {
        voterUri: 'https://social.example/users/me',
        questionUri: 'https://remote.example/q/1',
        authorUri: 'https://remote.example/users/a',
      }),
    ).toEqual([
      {
        type: 'Note',
        name: 'Cherry',
        inReplyTo: 'https://remote.example/q/1',
        attributedTo: 'https://social.example/users/me',
        to: ['https://remote.example/users/a'],
      },
      {
        type: 'Note',
        name: 'Beefsteak',
        inReplyTo: 'https://remote.example/q/1',
        attributedTo: 'https://social.example/users/me',
        to: ['https://remote.example/users/a'],
      },
    ]);
  });
});
