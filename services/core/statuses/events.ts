// The events of status operations, with what fan-out, notifications, delivery and trends need.
// Status events are keyed by the author (create → edit → delete stay in order); interaction
// events by the acting account.
import type { NewEvent } from '../events/outbox.ts';
import type { StatusDoc } from '../model/statuses.ts';
import type { Id } from '../ids.ts';

const str = (id: bigint | null): string | null => (id === null ? null : String(id));
const exists = (status: StatusDoc) => ({
  collection: 'statuses',
  filter: { _id: status._id },
  expect: 'exists' as const,
});

export function statusCreatedEvent(s: StatusDoc, opts: { hasPoll?: boolean } = {}): NewEvent<'StatusCreated'> {
  return {
    type: 'StatusCreated',
    key: String(s.accountId),
    payload: {
      ...statusIdentity(s),
      inReplyToId: str(s.inReplyToId),
      inReplyToAccountId: str(s.inReplyToAccountId),
      conversationId: str(s.conversationId),
      mentionedAccountIds: notifiedMentions(s).map(String),
      tagNames: s.tagNames,
      language: s.language,
      sensitive: s.sensitive,
      hasMedia: s.mediaIds.length > 0,
      hasPoll: opts.hasPoll ?? s.pollId !== null,
      applicationId: str(s.applicationId),
      createdAt: s.createdAt,
      quotedStatusId: str(s.quote?.quotedStatusId ?? null),
      quotedAccountId: str(s.quote?.quotedAccountId ?? null),
      quoteState: s.quote?.state ?? null,
    },
    verify: exists(s),
  };
}

export function statusUpdatedEvent(s: StatusDoc, editedAt: Date, pollChanged: boolean): NewEvent<'StatusUpdated'> {
  return statusUpdated(s, { pollChanged, editedAt, change: null }, { _id: s._id, editedAt });
}

/**
 * A change to a status that is not an edit (its quote's state, its quote policy): readers' streams
 * get `status.update`; no `update` notification. `written` is the filter true once the write happened.
 */
export function statusChangedEvent(
  s: StatusDoc,
  change: 'quote' | 'policy',
  written: Record<string, unknown>,
): NewEvent<'StatusUpdated'> {
  return statusUpdated(s, { pollChanged: false, editedAt: s.editedAt ?? s.createdAt, change }, written);
}

/** A StatusUpdated event: an edit (`change` null) or another change; `written` is true once it is stored. */
function statusUpdated(
  s: StatusDoc,
  update: { pollChanged: boolean; editedAt: Date; change: 'quote' | 'policy' | null },
  written: Record<string, unknown>,
): NewEvent<'StatusUpdated'> {
  return {
    type: 'StatusUpdated',
    key: String(s.accountId),
    payload: {
      ...statusIdentity(s),
      mentionedAccountIds: notifiedMentions(s).map(String),
      tagNames: s.tagNames,
      language: s.language,
      ...update,
    },
    verify: { collection: 'statuses', filter: written, expect: 'exists' },
  };
}

export function statusDeletedEvent(s: StatusDoc, deletedAt: Date): NewEvent<'StatusDeleted'> {
  return {
    type: 'StatusDeleted',
    key: String(s.accountId),
    payload: {
      ...statusIdentity(s),
      inReplyToId: str(s.inReplyToId),
      conversationId: str(s.conversationId),
      mentionedAccountIds: notifiedMentions(s).map(String),
      tagNames: s.tagNames,
      deletedAt,
    },
    verify: { collection: 'statuses', filter: { _id: s._id, deletedAt: { $ne: null } }, expect: 'exists' },
  };
}

/** Who and what every status event names: the status, its author, its address and audience. */
function statusIdentity(s: StatusDoc) {
  return {
    statusId: String(s._id),
    accountId: String(s.accountId),
    uri: s.uri,
    local: s.local,
    visibility: s.visibility,
  };
}

/** What every reblog event says about the reblog (a status of its own) and what it reblogs. */
function reblogPayload(r: StatusDoc) {
  return {
    ...statusIdentity(r),
    reblogOfId: String(r.reblogOfId),
    reblogOfAccountId: String(r.reblogOfAccountId),
  };
}

export function reblogCreatedEvent(r: StatusDoc): NewEvent<'ReblogCreated'> {
  return {
    type: 'ReblogCreated',
    key: String(r.accountId),
    payload: { ...reblogPayload(r), createdAt: r.createdAt },
    verify: exists(r),
  };
}

export function reblogDeletedEvent(r: StatusDoc): NewEvent<'ReblogDeleted'> {
  return {
    type: 'ReblogDeleted',
    key: String(r.accountId),
    payload: reblogPayload(r),
    verify: { collection: 'statuses', filter: { _id: r._id, deletedAt: { $ne: null } }, expect: 'exists' },
  };
}

/** The mentions events announce (notified, streamed): silent ones stay out (Mastodon's active_mentions). */
function notifiedMentions(s: Pick<StatusDoc, 'mentionedAccountIds' | 'silentMentionIds'>): Id[] {
  const silent = s.silentMentionIds;
  return silent?.length ? s.mentionedAccountIds.filter((a) => !silent.includes(a)) : s.mentionedAccountIds;
}
