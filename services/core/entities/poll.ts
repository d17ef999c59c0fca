// Poll entity (entities reference §7). Viewer fields (`voted`, `own_votes`) only with a user;
// option counts are null while a hide_totals poll runs, except for its author.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { PollDoc } from '../model/polls.ts';
import { findVote, isExpired, pollCounts } from '../polls/polls.ts';
import { emojisInTexts } from '../emojis/emojis.ts';

export const PollOptionEntity = Type.Object({
  title: Type.String(),
  votes_count: Type.Union([Type.Integer(), Type.Null()]),
});

export const PollEntity = Type.Object({
  id: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  expired: Type.Boolean(),
  multiple: Type.Boolean(),
  votes_count: Type.Integer(),
  voters_count: Type.Union([Type.Integer(), Type.Null()]),
  options: Type.Array(PollOptionEntity),
  emojis: Type.Array(Type.Object({}, { additionalProperties: true })),
  voted: Type.Optional(Type.Boolean()),
  own_votes: Type.Optional(Type.Array(Type.Integer())),
});
export type PollEntity = Static<typeof PollEntity>;

/** `authorDomain`: the domain whose custom emojis the options may use (null: local). */
export async function presentPoll(
  core: Core,
  poll: PollDoc,
  viewerAccountId: Id | null,
  authorDomain: string | null = null,
): Promise<PollEntity> {
  const expired = isExpired(poll);
  const own = viewerAccountId !== null && viewerAccountId === poll.accountId;
  const hidden = poll.hideTotals && !expired && !own;
  const counts = await pollCounts(core, poll);
  const entity: PollEntity = {
    id: String(poll._id),
    expires_at: poll.expiresAt ? poll.expiresAt.toISOString() : null,
    expired,
    multiple: poll.multiple,
    votes_count: counts.votesCount,
    // Mastodon creates local polls with voters_count 0 and counts voters for every poll.
    voters_count: counts.votersCount,
    options: poll.options.map((title, i) => ({ title, votes_count: hidden ? null : (counts.tallies[i] ?? 0) })),
    emojis: await emojisInTexts(core, poll.options, authorDomain),
  };
  if (viewerAccountId !== null) {
    const vote = own ? null : await findVote(core, poll._id, viewerAccountId);
    entity.voted = own || vote !== null;
    entity.own_votes = vote ? vote.choices : [];
  }
  return entity;
}
