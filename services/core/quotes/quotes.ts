// Quote posts (Mastodon 4.5): what a new status may quote, and the quote's life afterwards
// (revoked by the quoted author, `deleted` with the quoted status, counted in `quotesCount` while
// accepted). The quote lives on the quoting status (StatusDoc.quote); state changes publish a
// StatusUpdated of the quoting status with `change: 'quote'`, so its readers' streams get the
// new rendering (Mastodon's DistributionWorker `update`) without an `update` notification.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { CachedAccount } from '../model/accounts.ts';
import { statuses, type QuoteState, type StatusDoc, type StatusQuote } from '../model/statuses.ts';
import { isFollowing } from '../graph/relations.ts';
import { findVisibleStatus } from '../statuses/visibility.ts';
import { statusForbidden, statusNotFound, statusValidation } from '../statuses/errors.ts';
import { invalidateRenderedStatuses } from '../statuses/renderCache.ts';
import { statusChangedEvent } from '../statuses/events.ts';
import { stampDeletionEvents } from './federation.ts';
import {
  localStatusPolicy,
  needsFollowRelation,
  quoteDecision,
  type QuoteDecision,
  type QuotePolicySetting,
} from './policy.ts';

export const QUOTED_STATUS_NOT_FOUND = 'The post you are trying to quote does not appear to exist.';
export const QUOTED_USER_NOT_MENTIONED = 'Cannot quote a non-mentioned user in a Private Mention post.';

/** What `accountId` may do about quoting `status` (Mastodon's StatusPolicy#quote? asks != denied). */
export async function decideQuote(
  core: Core,
  status: StatusDoc,
  account: Pick<CachedAccount, '_id'>,
): Promise<QuoteDecision> {
  const follows = needsFollowRelation(status, account._id)
    ? await isFollowing(core, account._id, status.accountId)
    : undefined;
  return quoteDecision(status, account._id, { follows });
}

/**
 * The status `quotedId` names, when `author` may quote it: visible to them and allowed by its
 * policy (else 404 with Mastodon's message, which does not tell the two apart).
 */
export async function quotableStatus(core: Core, author: CachedAccount, quotedId: Id): Promise<StatusDoc> {
  const quoted = await findVisibleStatus(core, author, quotedId);
  if (!quoted || (await decideQuote(core, quoted, author)) === 'denied') throw statusNotFound(QUOTED_STATUS_NOT_FOUND);
  return quoted;
}

/**
 * The quote of a new local status. A quote of a local status is accepted at once (the policy was
 * checked); one of a remote status waits for the remote server's answer to the QuoteRequest.
 * A private mention may quote only its author's posts or those of an account it mentions.
 */
export function newQuote(
  author: Pick<CachedAccount, '_id'>,
  quoted: StatusDoc,
  visibility: StatusDoc['visibility'],
  mentionedAccountIds: readonly Id[],
  activityUri: string | null,
): StatusQuote {
  if (visibility === 'direct' && quoted.accountId !== author._id && !mentionedAccountIds.includes(quoted.accountId))
    throw statusValidation(QUOTED_USER_NOT_MENTIONED);
  return {
    quotedStatusId: quoted._id,
    quotedAccountId: quoted.accountId,
    state: quoted.local ? 'accepted' : 'pending',
    quotedUri: quoted.uri,
    approvalUri: null,
    activityUri: quoted.local ? null : activityUri,
    legacy: false,
  };
}

/** Counts a quote that became accepted (or stopped being) on the quoted status. */
export async function countQuote(core: Core, quotedStatusId: Id | null, by: 1 | -1): Promise<void> {
  if (quotedStatusId === null) return;
  await collection(core.db, statuses).updateOne({ _id: quotedStatusId }, { $inc: { quotesCount: by } });
}

/**
 * Moves the quote of `quoting` from one of `from` to `to`, adjusts the count and announces the
 * change; false when the quote was not in one of those states (a concurrent change won).
 */
export async function changeQuoteState(
  core: Core,
  quoting: StatusDoc,
  from: readonly QuoteState[],
  to: QuoteState,
  extra: Partial<StatusQuote> = {},
): Promise<boolean> {
  if (!quoting.quote) return false;
  const set: Record<string, unknown> = { 'quote.state': to };
  for (const [k, v] of Object.entries(extra)) set[`quote.${k}`] = v;
  let changed = false;
  let previous: QuoteState | null = null;
  await core.outbox.write([statusChangedEvent(quoting, 'quote', { _id: quoting._id, 'quote.state': to })], async () => {
    const before = await collection(core.db, statuses).findOneAndUpdate(
      { _id: quoting._id, deletedAt: null, 'quote.state': { $in: [...from] } },
      { $set: set },
      { returnDocument: 'before' },
    );
    if (!before?.quote) return;
    changed = true;
    previous = before.quote.state;
    const delta = (to === 'accepted' ? 1 : 0) - (previous === 'accepted' ? 1 : 0);
    if (delta !== 0) await countQuote(core, before.quote.quotedStatusId, delta as 1 | -1);
  });
  if (changed) await invalidateRenderedStatuses(core, [quoting._id]);
  return changed;
}

/**
 * The quoted author takes their approval back (POST /api/v1/statuses/:id/quotes/:quoting/revoke):
 * an accepted quote becomes `revoked`, a pending one `rejected` (Mastodon's Quote#reject!).
 */
export async function revokeQuote(
  core: Core,
  quotedAuthor: CachedAccount,
  quotedId: Id,
  quotingId: Id,
): Promise<StatusDoc> {
  const quoting = await collection(core.db, statuses).findOne({
    _id: quotingId,
    'quote.quotedStatusId': quotedId,
    deletedAt: null,
  });
  if (!quoting?.quote) throw statusNotFound();
  if (quoting.quote.quotedAccountId !== quotedAuthor._id) throw statusForbidden();
  const state = quoting.quote.state;
  let changed = false;
  if (state === 'accepted') changed = await changeQuoteState(core, quoting, ['accepted'], 'revoked');
  else if (state === 'pending') changed = await changeQuoteState(core, quoting, ['pending'], 'rejected');
  // The servers that show the quote learn it from the Delete of the stamp.
  if (changed) {
    const events = await stampDeletionEvents(core, { ...quotedAuthor, uri: quotedAuthor.uri }, quoting);
    if (events.length > 0) await core.outbox.write(events, () => Promise.resolve());
  }
  return (await collection(core.db, statuses).findOne({ _id: quoting._id })) ?? quoting;
}

/** The quoted status went away: every quote of it becomes `deleted` (their readers see it go). */
export async function quotedStatusDeleted(core: Core, quoted: Pick<StatusDoc, '_id'>): Promise<void> {
  const quoting = await collection(core.db, statuses)
    .find({ 'quote.quotedStatusId': quoted._id, 'quote.state': { $in: ['accepted', 'pending'] }, deletedAt: null })
    .toArray();
  for (const q of quoting) await changeQuoteState(core, q, ['accepted', 'pending'], 'deleted');
}

/** A quoting status went away: its accepted quote no longer counts. */
export async function quotingStatusDeleted(core: Core, quoting: Pick<StatusDoc, 'quote'>): Promise<void> {
  if (quoting.quote?.state === 'accepted') await countQuote(core, quoting.quote.quotedStatusId, -1);
}

/**
 * PUT /api/v1/statuses/:id/interaction_policy (and an edit's `quote_approval_policy`): the author
 * sets who may quote the status; not public or unlisted stays nobody. `announce`: publish the
 * change (an edit publishes its own event).
 */
export async function setQuotePolicy(
  core: Core,
  author: Pick<CachedAccount, '_id'>,
  status: StatusDoc,
  setting: QuotePolicySetting,
  announce = true,
): Promise<StatusDoc> {
  if (status.accountId !== author._id || status.reblogOfId !== null) throw statusForbidden();
  const policy = localStatusPolicy(setting, status.visibility);
  if ((status.quoteApprovalPolicy ?? 0) === policy) return status;
  const write = () =>
    collection(core.db, statuses).updateOne({ _id: status._id }, { $set: { quoteApprovalPolicy: policy } });
  if (announce)
    await core.outbox.write(
      [statusChangedEvent(status, 'policy', { _id: status._id, quoteApprovalPolicy: policy })],
      write,
    );
  else await write();
  await invalidateRenderedStatuses(core, [status._id]);
  return { ...status, quoteApprovalPolicy: policy };
}
