// The statuses side of media attachments and polls (owned by the media area): loading and
// attaching media, creating and replacing polls. One place, so posting and editing share it.
import type { Core } from '../context.ts';
import {
  attachToStatus,
  detachFromStatus,
  loadAttachmentsForPosting,
  updateAttachmentAttributes,
} from '../media/statusAttachments.ts';
import type { Id } from '../ids.ts';
import { createPoll, findPoll, removePoll, replacePoll, validatePollInput } from '../polls/polls.ts';

export interface PollInput {
  options: string[];
  expiresIn: number;
  multiple: boolean;
  hideTotals: boolean;
}

export interface MediaAttributesInput {
  id: Id;
  description?: string;
  focus?: string;
}

/** Validates media ids for a new or edited status (422 on a bad one); returns them in order. */
export async function checkMediaForPosting(core: Core, accountId: Id, ids: Id[], statusId?: Id): Promise<Id[]> {
  return (await loadAttachmentsForPosting(core, accountId, ids, { statusId })).map((d) => d._id);
}

export async function attachMedia(core: Core, ids: Id[], statusId: Id): Promise<void> {
  await attachToStatus(core, ids, statusId);
}

export async function detachMedia(core: Core, ids: Id[], statusId: Id): Promise<void> {
  await detachFromStatus(core, ids, statusId);
}

export async function updateMediaAttributes(core: Core, accountId: Id, attrs: MediaAttributesInput[]): Promise<void> {
  for (const a of attrs)
    await updateAttachmentAttributes(core, accountId, a.id, { description: a.description, focus: a.focus });
}

/** 422 for a bad poll (Mastodon's wording); returns it normalised. */
export function checkPollInput(poll: PollInput): PollInput {
  return validatePollInput(poll);
}

export async function createStatusPoll(core: Core, statusId: Id, accountId: Id, poll: PollInput): Promise<Id> {
  return (await createPoll(core, { statusId, accountId, ...poll }))._id;
}

/** The poll of an edited status (votes reset when options change); null when it has none any more. */
export async function replaceStatusPoll(
  core: Core,
  statusId: Id,
  accountId: Id,
  previous: Id | null,
  poll: PollInput | null,
): Promise<Id | null> {
  if (poll) return (await replacePoll(core, { statusId, accountId, pollId: previous, ...poll }))._id;
  if (previous !== null) await removePoll(core, previous);
  return null;
}

export async function pollOptionTitles(core: Core, pollId: Id | null): Promise<string[] | null> {
  if (pollId === null) return null;
  return (await findPoll(core, pollId))?.options ?? null;
}
