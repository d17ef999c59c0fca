// The statuses side of media attachments and polls (owned by the media area): loading and
// attaching media, creating and replacing polls. One place, so posting and editing share it.
// TEMPORARY: until the media area's modules land, posting with media or a poll is refused.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { statusValidation } from './errors.ts';

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

export async function checkMediaForPosting(_core: Core, _accountId: Id, ids: Id[]): Promise<Id[]> {
  if (ids.length > 0) throw statusValidation('Media attachments are not available yet');
  return [];
}

export async function attachMedia(_core: Core, _ids: Id[], _statusId: Id): Promise<void> {}

export async function updateMediaAttributes(_core: Core, _accountId: Id, _attrs: MediaAttributesInput[]): Promise<void> {}

export function checkPollInput(_poll: PollInput): void {
  throw statusValidation('Polls are not available yet');
}

export async function createStatusPoll(_core: Core, _statusId: Id, _accountId: Id, _poll: PollInput): Promise<Id> {
  throw statusValidation('Polls are not available yet');
}

/** Replaces the poll of an edited status (votes reset); returns the new poll id or null. */
export async function replaceStatusPoll(_core: Core, _statusId: Id, _accountId: Id, _previous: Id | null, poll: PollInput | null): Promise<Id | null> {
  if (poll) throw statusValidation('Polls are not available yet');
  return null;
}

export async function pollOptionTitles(_core: Core, _pollId: Id | null): Promise<string[] | null> {
  return null;
}
