// Polls in ActivityPub (federation reference §4.5, §6.10): our polls as the Question members of a
// status, remote Questions read into polls, the vote Notes we send to a remote poll's author and
// the votes remote accounts send to ours (one Note per chosen option, named by the option title).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { polls, pollVotes, type PollDoc } from '../model/polls.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { LIMITS } from '../instance/limits.ts';
import { isExpired, pollCounts, schedulePollUpdate } from './polls.ts';

export interface ApPollOption {
  type: 'Note';
  name: string;
  replies: { type: 'Collection'; totalItems: number };
}

export interface ApQuestionFields {
  endTime: string | null;
  closed?: string;
  votersCount: number;
  oneOf?: ApPollOption[];
  anyOf?: ApPollOption[];
}

/** The poll members of our status's `Question` object. */
export async function pollToActivityPub(core: Core, poll: PollDoc): Promise<ApQuestionFields> {
  const counts = await pollCounts(core, poll);
  const options = poll.options.map((name, i) => ({
    type: 'Note' as const,
    name,
    replies: { type: 'Collection' as const, totalItems: counts.tallies[i] ?? 0 },
  }));
  const out: ApQuestionFields = {
    endTime: poll.expiresAt ? poll.expiresAt.toISOString() : null,
    votersCount: counts.votersCount,
  };
  if (isExpired(poll)) out.closed = (poll.closedAt ?? poll.expiresAt ?? new Date()).toISOString();
  if (poll.multiple) out.anyOf = options;
  else out.oneOf = options;
  return out;
}

export interface RemotePollInput {
  options: string[];
  tallies: number[];
  multiple: boolean;
  expiresAt: Date | null;
  closedAt: Date | null;
  votersCount: number;
}

function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A remote `Question`'s poll; null when it has no usable options. */
export function remotePollFrom(question: unknown): RemotePollInput | null {
  if (!question || typeof question !== 'object') return null;
  const q = question as Record<string, unknown>;
  const multiple = Array.isArray(q.anyOf);
  const items = multiple ? (q.anyOf as unknown[]) : Array.isArray(q.oneOf) ? (q.oneOf as unknown[]) : null;
  if (!items) return null;
  const options: string[] = [];
  const tallies: number[] = [];
  for (const item of items.slice(0, 20)) {
    if (!item || typeof item !== 'object') continue;
    const o = item as Record<string, unknown>;
    const title = typeof o.name === 'string' ? o.name : typeof o.content === 'string' ? o.content : null;
    if (!title) continue;
    options.push([...title].slice(0, 200).join(''));
    const total = (o.replies as { totalItems?: unknown } | undefined)?.totalItems;
    tallies.push(typeof total === 'number' && Number.isInteger(total) && total >= 0 ? total : 0);
  }
  if (options.length === 0) return null;
  const closedAt = q.closed === true ? new Date() : date(q.closed);
  const voters = q.votersCount;
  return {
    options,
    tallies,
    multiple,
    expiresAt: date(q.endTime) ?? closedAt,
    closedAt,
    votersCount:
      typeof voters === 'number' && Number.isInteger(voters) && voters >= 0
        ? voters
        : multiple
          ? 0
          : tallies.reduce((a, b) => a + b, 0),
  };
}

/** Creates or refreshes the poll of a remote status (counts come from its server). */
export async function upsertRemotePoll(
  core: Core,
  statusId: Id,
  accountId: Id,
  input: RemotePollInput,
): Promise<PollDoc> {
  const coll = collection(core.db, polls);
  const now = new Date();
  const counts = {
    tallies: input.tallies,
    votesCount: input.tallies.reduce((a, b) => a + b, 0),
    votersCount: input.votersCount,
  };
  const existing = await coll.findOne({ statusId });
  if (existing) {
    const changed =
      existing.options.length !== input.options.length || existing.options.some((o, i) => o !== input.options[i]);
    if (changed) await collection(core.db, pollVotes).deleteMany({ pollId: existing._id });
    const set = {
      options: input.options,
      multiple: input.multiple,
      expiresAt: input.expiresAt,
      closedAt: input.closedAt,
      ...counts,
      updatedAt: now,
    };
    return (
      (await coll.findOneAndUpdate({ _id: existing._id }, { $set: set }, { returnDocument: 'after' })) ?? {
        ...existing,
        ...set,
      }
    );
  }
  const poll: PollDoc = {
    _id: await nextSerialId(core.db, 'polls'),
    statusId,
    accountId,
    options: input.options,
    multiple: input.multiple,
    hideTotals: false,
    expiresAt: input.expiresAt,
    closedAt: input.closedAt,
    ...counts,
    version: 1,
    remote: true,
    createdAt: now,
    updatedAt: now,
  };
  await coll.insertOne(poll);
  return poll;
}

/** The `Create{Note}` objects (without ids) a local voter sends to a remote poll's author. */
export function voteNotes(
  poll: PollDoc,
  choices: number[],
  opts: { voterUri: string; questionUri: string; authorUri: string },
) {
  return choices.map((c) => ({
    type: 'Note' as const,
    name: poll.options[c],
    inReplyTo: opts.questionUri,
    attributedTo: opts.voterUri,
    to: [opts.authorUri],
  }));
}

/**
 * A remote account's vote Note on our poll (one per chosen option). Returns false when it is not
 * counted: unknown option, poll ended, second option on a single-choice poll, a repeated option.
 */
export async function recordRemoteVote(
  core: Core,
  voter: AccountDoc,
  poll: PollDoc,
  optionName: string,
  uri: string | null,
): Promise<boolean> {
  if (poll.remote || isExpired(poll) || voter._id === poll.accountId) return false;
  const choice = poll.options.indexOf(optionName);
  if (choice < 0 || poll.options.length > LIMITS.polls.maxOptions * 5) return false;
  const votes = collection(core.db, pollVotes);
  const existing = await votes.findOne({ pollId: poll._id, accountId: voter._id });
  if (existing) {
    if (!poll.multiple || existing.choices.includes(choice)) return false;
    await votes.updateOne({ _id: existing._id }, { $addToSet: { choices: choice } });
    await schedulePollUpdate(core, poll);
    return true;
  }
  try {
    await votes.insertOne({
      _id: await nextSerialId(core.db, 'poll_votes'),
      pollId: poll._id,
      accountId: voter._id,
      choices: [choice],
      uri,
      createdAt: new Date(),
    });
    await schedulePollUpdate(core, poll);
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return recordRemoteVote(core, voter, poll, optionName, uri);
    throw err;
  }
}
