// Polls (federation reference §6.10): a local poll's new counts or end as Update of its Question
// to everyone who has it, and a local account's vote to the poll's author.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { polls, pollVotes } from '../../model/polls.ts';
import type { EventRecord } from '../../../../schemas/index.ts';
import { activityIds } from '../uris.ts';
import { renderStatusObject } from '../render/load.ts';
import { renderUpdateNote, renderVote } from '../render/activities.ts';
import { inboxesOf, personalInboxOf } from './audience.ts';
import { big, localAccount, personal, plan, statusById, statusReach, type DeliveryPlan } from './planHelpers.ts';

export type PollEvent = 'PollExpired' | 'PollUpdateRequested' | 'PollVoted';

export async function planPoll(core: Core, type: PollEvent, payload: EventRecord<PollEvent>): Promise<DeliveryPlan[]> {
  switch (type) {
    case 'PollExpired':
    case 'PollUpdateRequested': {
      // A local poll closed, or votes changed its counts (debounced by the scheduler): the
      // Question goes to everyone who has it, voters included.
      const p = payload as EventRecord<'PollExpired'> | EventRecord<'PollUpdateRequested'>;
      if ('local' in p && !p.local) return [];
      const [status, author] = await Promise.all([statusById(core, p.statusId), localAccount(core, p.accountId)]);
      if (!status || status.deletedAt || !author) return [];
      const note = await renderStatusObject(core, status, author);
      const activity = renderUpdateNote(note, p.occurredAt);
      const reach = await statusReach(core, status, true);
      const voters = await collection(core.db, pollVotes)
        .find({ pollId: big(p.pollId) }, { projection: { accountId: 1 } })
        .limit(10_000)
        .toArray();
      await inboxesOf(
        core,
        voters.map((v) => v.accountId),
        reach,
      );
      return [plan(String(activity.id), activity, author, reach)];
    }
    case 'PollVoted': {
      const p = payload as EventRecord<'PollVoted'>;
      if (p.local) return [];
      const [voter, status, target, poll] = await Promise.all([
        localAccount(core, p.accountId),
        statusById(core, p.statusId),
        personalInboxOf(core, big(p.pollAccountId)),
        collection(core.db, polls).findOne({ _id: big(p.pollId) }),
      ]);
      if (!voter || !status || !target || !poll) return [];
      return p.choices.map((choice, i) => {
        const voteId = activityIds.vote(voter.uri, `${p.pollId}-${choice}`);
        const vote = renderVote({
          voteId,
          actor: voter.uri,
          pollUri: status.uri,
          pollAuthor: target.account.uri,
          option: p.optionTitles[i] ?? poll.options[choice],
        });
        return plan(String(vote.id), vote, voter, personal(target));
      });
    }
  }
  return [];
}
