// Polls: validation of the poll a status is posted with, creation and replacement on edits
// (changing options or `multiple` resets the votes, like Mastodon), voting, counting and closing.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { polls, pollVotes, type PollDoc, type PollVoteDoc } from '../model/polls.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { LIMITS } from '../instance/limits.ts';
import { validationFailed } from '../errors.ts';
import { claimAttempt } from '../scheduledStatuses/claims.ts';
import { railsBoolean } from '../railsParams.ts';

const P = LIMITS.polls;

export interface PollParams {
  options: string[];
  /** Seconds from now. */
  expiresIn: number;
  multiple: boolean;
  hideTotals: boolean;
}

export interface PollInputRaw {
  options?: unknown;
  expiresIn?: unknown;
  multiple?: unknown;
  hideTotals?: unknown;
}

/** Rails-style boolean with a default for "not given". */
export function castBoolean(value: unknown, fallback = false): boolean {
  return railsBoolean(value) ?? fallback;
}

/** Checks a poll as posted (422 `Validation failed: ...` with Mastodon's wording) and normalises it. */
export function validatePollInput(input: PollInputRaw): PollParams {
  let options = input.options;
  if (options && typeof options === 'object' && !Array.isArray(options)) {
    // `poll[options][0]=a&poll[options][1]=b` arrives as an object keyed by index.
    options = Object.values(options as Record<string, unknown>);
  }
  if (!Array.isArray(options) || options.some((o) => typeof o !== 'string'))
    throw validationFailed('Poll options must have more than one item');
  const titles = (options as string[]).map((o) => o.trim());
  if (titles.length < 2) throw validationFailed('Poll options must have more than one item');
  if (titles.length > P.maxOptions)
    throw validationFailed(`Poll options can't contain more than ${P.maxOptions} items`);
  if (titles.some((t) => t === '')) throw validationFailed("Poll options can't be blank");
  if (titles.some((t) => [...t].length > P.maxCharactersPerOption)) {
    throw validationFailed(`Poll options cannot be longer than ${P.maxCharactersPerOption} characters each`);
  }
  if (new Set(titles).size !== titles.length) throw validationFailed('Poll options contain duplicate items');
  const raw = input.expiresIn;
  const expiresIn =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(expiresIn)) throw validationFailed('Poll expires at is invalid');
  if (expiresIn < P.minExpiration) throw validationFailed('Poll expires at is too soon');
  if (expiresIn > P.maxExpiration) throw validationFailed('Poll expires at is too far into the future');
  return {
    options: titles,
    expiresIn: Math.floor(expiresIn),
    multiple: castBoolean(input.multiple),
    hideTotals: castBoolean(input.hideTotals),
  };
}

export interface CreatePollInput extends PollParams {
  statusId: Id;
  accountId: Id;
}

/** Creates the poll of a new status (the caller writes the status and its StatusCreated event). */
export async function createPoll(core: Core, input: CreatePollInput): Promise<PollDoc> {
  const now = new Date();
  const poll: PollDoc = {
    _id: await nextSerialId(core.db, 'polls'),
    statusId: input.statusId,
    accountId: input.accountId,
    options: input.options,
    multiple: input.multiple,
    hideTotals: input.hideTotals,
    expiresAt: new Date(now.getTime() + input.expiresIn * 1000),
    closedAt: null,
    tallies: input.options.map(() => 0),
    votesCount: 0,
    votersCount: 0,
    version: 1,
    remote: false,
    createdAt: now,
    updatedAt: now,
  };
  await collection(core.db, polls).insertOne(poll);
  return poll;
}

export interface ReplacePollInput extends CreatePollInput {
  /** The status's current poll, if any. */
  pollId: Id | null;
}

/**
 * The poll of an edited status. Keeps the poll (and its votes) when options and `multiple` are
 * unchanged; otherwise resets its votes. `votesReset` tells the caller (StatusUpdated) it changed.
 */
export async function replacePoll(core: Core, input: ReplacePollInput): Promise<PollDoc & { votesReset: boolean }> {
  const coll = collection(core.db, polls);
  const previous = input.pollId === null ? null : await coll.findOne({ _id: input.pollId, statusId: input.statusId });
  if (!previous) return { ...(await createPoll(core, input)), votesReset: true };
  const sameChoices =
    previous.multiple === input.multiple &&
    previous.options.length === input.options.length &&
    previous.options.every((o, i) => o === input.options[i]);
  const now = new Date();
  const set: Partial<PollDoc> = {
    options: input.options,
    multiple: input.multiple,
    hideTotals: input.hideTotals,
    expiresAt: new Date(now.getTime() + input.expiresIn * 1000),
    closedAt: null,
    updatedAt: now,
  };
  if (!sameChoices) {
    Object.assign(set, {
      tallies: input.options.map(() => 0),
      votesCount: 0,
      votersCount: 0,
      version: previous.version + 1,
    });
    await collection(core.db, pollVotes).deleteMany({ pollId: previous._id });
  }
  const updated = await coll.findOneAndUpdate({ _id: previous._id }, { $set: set }, { returnDocument: 'after' });
  return { ...(updated ?? { ...previous, ...set }), votesReset: !sameChoices };
}

/** Removes a poll (status edited to have none, or deleted). */
export async function removePoll(core: Core, pollId: Id): Promise<void> {
  await collection(core.db, pollVotes).deleteMany({ pollId });
  await collection(core.db, polls).deleteOne({ _id: pollId });
}

export function isExpired(poll: PollDoc, now = new Date()): boolean {
  return poll.closedAt !== null || (poll.expiresAt !== null && poll.expiresAt.getTime() <= now.getTime());
}

export async function findPoll(core: Core, id: Id): Promise<PollDoc | null> {
  return collection(core.db, polls).findOne({ _id: id });
}

export async function findPollByStatus(core: Core, statusId: Id): Promise<PollDoc | null> {
  return collection(core.db, polls).findOne({ statusId });
}

/** The viewer's vote, if any. */
export async function findVote(core: Core, pollId: Id, accountId: Id): Promise<PollVoteDoc | null> {
  return collection(core.db, pollVotes).findOne({ pollId, accountId });
}

/** Parses `choices[]` (indexes as strings or numbers). */
export function parseChoices(value: unknown): number[] {
  const list = Array.isArray(value)
    ? value
    : value && typeof value === 'object'
      ? Object.values(value)
      : value === undefined || value === null || value === ''
        ? []
        : [value];
  const out: number[] = [];
  for (const v of list) {
    const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
    if (!/^\d{1,3}$/.test(s)) throw validationFailed('The chosen vote option does not exist');
    out.push(Number(s));
  }
  return [...new Set(out)];
}

/**
 * Records a vote (the caller checked the voter may see the status). 422 for an ended poll, the
 * author's own poll, a second vote, several choices on a single-choice poll or unknown options.
 * The unique (poll, account) index makes a second vote fail even when both arrive at once.
 */
export async function votePoll(core: Core, voter: AccountDoc, poll: PollDoc, choices: number[]): Promise<PollDoc> {
  if (choices.length === 0) throw validationFailed('The chosen vote option does not exist');
  if (isExpired(poll)) throw validationFailed('The poll has already ended');
  if (poll.accountId === voter._id) throw validationFailed('You cannot vote in your own polls');
  if (choices.some((c) => c < 0 || c >= poll.options.length))
    throw validationFailed('The chosen vote option does not exist');
  if (!poll.multiple && choices.length > 1) throw validationFailed('You have already voted on this poll');
  const vote: PollVoteDoc = {
    _id: await nextSerialId(core.db, 'poll_votes'),
    pollId: poll._id,
    accountId: voter._id,
    choices,
    uri: null,
    createdAt: new Date(),
  };
  try {
    await core.outbox.write(
      [
        {
          type: 'PollVoted',
          key: String(poll._id),
          payload: {
            pollId: String(poll._id),
            statusId: String(poll.statusId),
            pollAccountId: String(poll.accountId),
            accountId: String(voter._id),
            choices,
            optionTitles: choices.map((c) => poll.options[c]),
            local: !poll.remote,
          },
          verify: { collection: pollVotes.name, filter: { _id: vote._id }, expect: 'exists' },
        },
      ],
      async () => {
        await collection(core.db, pollVotes).insertOne(vote);
        if (!poll.remote) await schedulePollUpdate(core, poll);
      },
    );
  } catch (err) {
    if (isDuplicateKeyError(err)) throw validationFailed('You have already voted on this poll');
    throw err;
  }
  return (await findPoll(core, poll._id)) ?? poll;
}

export interface PollCounts {
  tallies: number[];
  /** Choices made in total. */
  votesCount: number;
  votersCount: number;
}

/** Counts the votes of a poll from its vote documents (one indexed aggregation per question). */
async function countVotes(core: Core, poll: PollDoc): Promise<PollCounts> {
  const votes = collection(core.db, pollVotes);
  const [perOption, voters] = await Promise.all([
    votes
      .aggregate<{ _id: number; n: number }>([
        { $match: { pollId: poll._id } },
        { $unwind: '$choices' },
        { $group: { _id: '$choices', n: { $sum: 1 } } },
      ])
      .toArray(),
    votes.countDocuments({ pollId: poll._id }),
  ]);
  const tallies = poll.options.map(() => 0);
  for (const row of perOption) if (row._id >= 0 && row._id < tallies.length) tallies[row._id] = row.n;
  return { tallies, votesCount: tallies.reduce((a, b) => a + b, 0), votersCount: voters };
}

/**
 * The counts to show. A running local poll is counted from its votes: exact under concurrent votes
 * without relying on atomic $inc (which the MongoDB-wire stand-in does not guarantee). A closed poll
 * (counted once when it closed) and a remote poll (counts from its server) use the stored numbers.
 */
export async function pollCounts(core: Core, poll: PollDoc): Promise<PollCounts> {
  if (poll.closedAt !== null || poll.remote)
    return { tallies: poll.tallies, votesCount: poll.votesCount, votersCount: poll.votersCount };
  return countVotes(core, poll);
}

/** Recomputes and stores a poll's counts from its votes (when it closes). */
export async function recountPoll(core: Core, pollId: Id): Promise<void> {
  const poll = await findPoll(core, pollId);
  if (!poll || poll.remote) return;
  const counts = await countVotes(core, poll);
  await collection(core.db, polls).updateOne({ _id: pollId }, { $set: { ...counts, updatedAt: new Date() } });
}

/**
 * Closes polls whose time is up. Each due poll is claimed (claims.ts: one owner per attempt, a lease
 * on the poll for crashes), counted for good and closed together with its PollExpired event through
 * the outbox. Returns how many it closed.
 */
export async function closeExpiredPolls(
  core: Core,
  opts: { now?: Date; limit?: number; leaseMs?: number; workerId?: string } = {},
): Promise<number> {
  const coll = collection(core.db, polls);
  const leaseMs = opts.leaseMs ?? 60_000;
  const now = opts.now ?? new Date();
  const owner = opts.workerId ?? `pid:${process.pid}`;
  const due = await coll
    .find({ closedAt: null, expiresAt: { $lte: now }, $or: [{ closingUntil: null }, { closingUntil: { $lte: now } }] })
    .sort({ expiresAt: 1 })
    .limit(opts.limit ?? 100)
    .toArray();
  let closed = 0;
  for (const candidate of due) {
    const attempt = candidate.closingAttempts ?? 0;
    if (!(await claimAttempt(core, `poll_expiry:${candidate._id}`, attempt, owner))) continue;
    const current = await coll.findOne({ _id: candidate._id });
    if (!current || current.closedAt !== null || (current.closingAttempts ?? 0) !== attempt) continue;
    await coll.updateOne(
      { _id: current._id },
      { $set: { closingUntil: new Date(Date.now() + leaseMs), closingAttempts: attempt + 1 } },
    );
    await core.outbox.write(
      [
        {
          type: 'PollExpired',
          key: String(current._id),
          payload: {
            pollId: String(current._id),
            statusId: String(current.statusId),
            accountId: String(current.accountId),
            local: !current.remote,
          },
          verify: { collection: polls.name, filter: { _id: current._id, closedAt: { $ne: null } }, expect: 'exists' },
        },
      ],
      async () => {
        const counts = current.remote ? {} : await countVotes(core, current);
        await coll.updateOne({ _id: current._id }, { $set: { ...counts, closedAt: now, updatedAt: new Date() } });
      },
    );
    closed++;
  }
  return closed;
}

/**
 * After a vote on a local poll, its new counts go to the servers that have the Question: one
 * Update POLL_UPDATE_DELAY after the first vote of a run (Mastodon's DistributePollUpdateWorker,
 * queued 3 minutes out and not again while pending). Polls with hidden totals send none.
 */
export async function schedulePollUpdate(core: Core, poll: PollDoc, now = new Date()): Promise<void> {
  if (poll.remote || poll.hideTotals) return;
  const due = new Date(now.getTime() + core.config.federation.pollUpdateDelaySeconds * 1000);
  await collection(core.db, polls).updateOne({ _id: poll._id, updateDueAt: null }, { $set: { updateDueAt: due } });
}

/**
 * Publishes the Updates that are due (the scheduler's `poll-updates` job): each due poll is claimed
 * for its due time, then cleared together with its PollUpdateRequested event. A poll that closed
 * meanwhile sends none (its PollExpired Update carries the final counts). Returns how many it sent.
 */
export async function publishDuePollUpdates(
  core: Core,
  opts: { now?: Date; limit?: number; workerId?: string } = {},
): Promise<number> {
  const coll = collection(core.db, polls);
  const now = opts.now ?? new Date();
  const owner = opts.workerId ?? `pid:${process.pid}`;
  const due = await coll
    .find({ updateDueAt: { $lte: now } })
    .sort({ updateDueAt: 1 })
    .limit(opts.limit ?? 100)
    .toArray();
  let sent = 0;
  for (const poll of due) {
    const at = poll.updateDueAt;
    if (!at || !(await claimAttempt(core, `poll_update:${poll._id}:${at.getTime()}`, 0, owner))) continue;
    if (poll.remote || isExpired(poll, now)) {
      await coll.updateOne({ _id: poll._id, updateDueAt: at }, { $set: { updateDueAt: null } });
      continue;
    }
    await core.outbox.write(
      [
        {
          type: 'PollUpdateRequested',
          key: String(poll._id),
          payload: { pollId: String(poll._id), statusId: String(poll.statusId), accountId: String(poll.accountId) },
          verify: { collection: polls.name, filter: { _id: poll._id, updateDueAt: { $ne: at } }, expect: 'exists' },
        },
      ],
      async () => {
        await coll.updateOne({ _id: poll._id, updateDueAt: at }, { $set: { updateDueAt: null } });
      },
    );
    sent++;
  }
  return sent;
}
