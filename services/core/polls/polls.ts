// Polls: validation of the poll a status is posted with, creation and replacement on edits
// (changing options or `multiple` resets the votes, like Mastodon), voting and closing.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { polls, pollVotes, type PollDoc, type PollVoteDoc } from '../model/polls.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { LIMITS } from '../instance/limits.ts';
import { validationFailed } from '../../api/errors.ts';

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

/** Rails-style boolean: "0", "f", "false", "off" (and "") are false. */
export function castBoolean(value: unknown, fallback = false): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return !/^(0|f|false|off|no|n)$/i.test(value.trim());
  return fallback;
}

/** Checks a poll as posted (422 `Validation failed: ...` with Mastodon's wording) and normalises it. */
export function validatePollInput(input: PollInputRaw): PollParams {
  let options = input.options;
  if (options && typeof options === 'object' && !Array.isArray(options)) {
    // `poll[options][0]=a&poll[options][1]=b` arrives as an object keyed by index.
    options = Object.values(options as Record<string, unknown>);
  }
  if (!Array.isArray(options) || options.some((o) => typeof o !== 'string')) throw validationFailed('Poll options must have more than one item');
  const titles = (options as string[]).map((o) => o.trim());
  if (titles.length < 2) throw validationFailed('Poll options must have more than one item');
  if (titles.length > P.maxOptions) throw validationFailed(`Poll options can't contain more than ${P.maxOptions} items`);
  if (titles.some((t) => t === '')) throw validationFailed("Poll options can't be blank");
  if (titles.some((t) => [...t].length > P.maxCharactersPerOption)) {
    throw validationFailed(`Poll options cannot be longer than ${P.maxCharactersPerOption} characters each`);
  }
  if (new Set(titles).size !== titles.length) throw validationFailed('Poll options contain duplicate items');
  const raw = input.expiresIn;
  const expiresIn = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(expiresIn)) throw validationFailed('Poll expires at is invalid');
  if (expiresIn < P.minExpiration) throw validationFailed('Poll expires at is too soon');
  if (expiresIn > P.maxExpiration) throw validationFailed('Poll expires at is too far into the future');
  return { options: titles, expiresIn: Math.floor(expiresIn), multiple: castBoolean(input.multiple), hideTotals: castBoolean(input.hideTotals) };
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
  const sameChoices = previous.multiple === input.multiple && previous.options.length === input.options.length && previous.options.every((o, i) => o === input.options[i]);
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
    Object.assign(set, { tallies: input.options.map(() => 0), votesCount: 0, votersCount: 0, version: previous.version + 1 });
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
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : value === undefined || value === null || value === '' ? [] : [value];
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
  if (choices.some((c) => c < 0 || c >= poll.options.length)) throw validationFailed('The chosen vote option does not exist');
  if (!poll.multiple && choices.length > 1) throw validationFailed('You have already voted on this poll');
  const vote: PollVoteDoc = { _id: await nextSerialId(core.db, 'poll_votes'), pollId: poll._id, accountId: voter._id, choices, uri: null, createdAt: new Date() };
  const inc: Record<string, number> = { votesCount: choices.length, votersCount: 1 };
  for (const c of choices) inc[`tallies.${c}`] = 1;
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
        await collection(core.db, polls).updateOne({ _id: poll._id }, { $inc: inc, $set: { updatedAt: new Date() } });
      },
    );
  } catch (err) {
    if (isDuplicateKeyError(err)) throw validationFailed('You have already voted on this poll');
    throw err;
  }
  return (await findPoll(core, poll._id)) ?? poll;
}

/** Recomputes a poll's counts from its votes (exact, e.g. when it closes). */
export async function recountPoll(core: Core, pollId: Id): Promise<void> {
  const poll = await findPoll(core, pollId);
  if (!poll) return;
  const tallies = poll.options.map(() => 0);
  let voters = 0;
  let votes = 0;
  for await (const v of collection(core.db, pollVotes).find({ pollId }, { projection: { choices: 1 } })) {
    voters++;
    for (const c of v.choices) {
      if (c >= 0 && c < tallies.length) {
        tallies[c]++;
        votes++;
      }
    }
  }
  await collection(core.db, polls).updateOne({ _id: pollId }, { $set: { tallies, votesCount: votes, votersCount: voters } });
}

/**
 * Closes polls whose time is up. Each due poll is first claimed with a short lease (only one
 * scheduler process gets it), then closed together with its PollExpired event through the outbox.
 * A process that dies holding a lease leaves the poll to the next one once the lease ends.
 * Returns how many it closed.
 */
export async function closeExpiredPolls(core: Core, opts: { now?: Date; limit?: number; leaseMs?: number } = {}): Promise<number> {
  const coll = collection(core.db, polls);
  const limit = opts.limit ?? 100;
  const leaseMs = opts.leaseMs ?? 60_000;
  let closed = 0;
  for (let i = 0; i < limit; i++) {
    const now = opts.now ?? new Date();
    const claimed = await coll.findOneAndUpdate(
      { closedAt: null, expiresAt: { $lte: now }, $or: [{ closingUntil: null }, { closingUntil: { $lte: now } }] },
      { $set: { closingUntil: new Date(now.getTime() + leaseMs) } },
      { sort: { expiresAt: 1 }, returnDocument: 'after' },
    );
    if (!claimed) break;
    await core.outbox.write(
      [
        {
          type: 'PollExpired',
          key: String(claimed._id),
          payload: { pollId: String(claimed._id), statusId: String(claimed.statusId), accountId: String(claimed.accountId), local: !claimed.remote },
          verify: { collection: polls.name, filter: { _id: claimed._id, closedAt: { $ne: null } }, expect: 'exists' },
        },
      ],
      async () => {
        await recountPoll(core, claimed._id);
        await coll.updateOne({ _id: claimed._id, closedAt: null }, { $set: { closedAt: now, updatedAt: now } });
      },
    );
    closed++;
  }
  return closed;
}
