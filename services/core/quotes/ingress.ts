// Quotes arriving from other servers, as Mastodon 4.5 reads them: the quote of an incoming post
// (FEP-044f `quote`, else `_misskey_quote`, `quoteUrl`, `quoteUri`, first value of the first
// present), approved when the quoter quotes themselves or when its `quoteAuthorization` stamp,
// fetched from the quoted author's host, names this post and the quoted one; QuoteRequests for our
// posts (answered Accept with a stamp, or Reject); the Accept/Reject of our QuoteRequests; and a
// Delete of a stamp, which revokes the quote.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc, type StatusQuote } from '../model/statuses.ts';
import type { NewEvent } from '../events/outbox.ts';
import { DocumentError, fetchDocument, isFetchProblem } from '../activitypub/fetchDocument.ts';
import { asArray, idOf, obj, typeIs, type JsonObject } from '../activitypub/json.ts';
import { hostOf, isLocalUri, quoteAuthorizationUri } from '../activitypub/uris.ts';
import { notifyAndTell } from '../notifications/tell.ts';
import { changeQuoteState, decideQuote } from './quotes.ts';
import { renderAcceptQuoteRequest, renderRejectQuoteRequest } from './federation.ts';

const QUOTE_KEYS = ['quote', '_misskey_quote', 'quoteUrl', 'quoteUri'] as const;

/** The quoted post's id an object names, by Mastodon's priority (null: none). */
export function quotedUriOf(object: JsonObject): string | null {
  for (const key of QUOTE_KEYS) {
    const first = asArray(object[key])[0];
    const id = idOf(first);
    if (id) return id;
  }
  return null;
}

export type StatusLookup = (uri: string) => Promise<StatusDoc | null>;

/** Whether a fetched stamp approves `quotingUri` quoting `quoted` (by `quotedAuthor`). */
export function stampApproves(
  stamp: JsonObject,
  stampUri: string,
  quotingUri: string,
  quoted: Pick<StatusDoc, 'uri'>,
  quotedAuthorUri: string,
): boolean {
  return (
    typeIs(stamp, 'QuoteAuthorization') &&
    idOf(stamp.attributedTo) === quotedAuthorUri &&
    hostOf(stampUri) === hostOf(quotedAuthorUri) &&
    idOf(stamp.interactingObject) === quotingUri &&
    idOf(stamp.interactionTarget) === quoted.uri
  );
}

/** The quote of an incoming post (null: it quotes nothing). */
export async function remoteQuoteOf(
  core: Core,
  quoter: AccountDoc,
  object: JsonObject,
  quotingUri: string,
  lookup: StatusLookup,
): Promise<StatusQuote | null> {
  const quotedUri = quotedUriOf(object);
  if (!quotedUri) return null;
  let quoted = await lookup(quotedUri).catch(() => null);
  if (quoted?.reblogOfId !== null && quoted?.reblogOfId !== undefined) quoted = null;
  const approvalUri = idOf(asArray(object.quoteAuthorization)[0]);
  const quote: StatusQuote = {
    quotedStatusId: quoted?._id ?? null,
    quotedAccountId: quoted?.accountId ?? null,
    state: 'pending',
    quotedUri,
    approvalUri: null,
    activityUri: null,
    legacy: !('quote' in object),
  };
  if (!quoted) return quote;
  // FEP-044f: quoting oneself needs no approval.
  if (quoted.accountId === quoter._id) return { ...quote, state: 'accepted' };
  if (!approvalUri || isLocalUri(core.config, approvalUri)) return quote;
  const quotedAuthor = await collection(core.db, accounts).findOne({ _id: quoted.accountId });
  if (!quotedAuthor) return quote;
  try {
    const stamp = await fetchDocument(core, approvalUri);
    if (stampApproves(stamp, approvalUri, quotingUri, quoted, quotedAuthor.uri))
      return { ...quote, state: 'accepted', approvalUri, refreshAt: nextStampRefresh() };
    return { ...quote, state: 'rejected' };
  } catch (err) {
    core.logger.info({ err, approvalUri }, 'quote: the authorization could not be fetched; quote left pending');
    return quote;
  }
}

/** One signed POST of `activity` to one inbox, through the delivery workers (DeliveryRequested). */
export function directDelivery(
  activity: JsonObject,
  signer: Pick<AccountDoc, '_id'>,
  recipient: Pick<AccountDoc, '_id' | 'inboxUrl'>,
  verify: NewEvent['verify'],
): NewEvent<'DeliveryRequested'> {
  return inboxDelivery(activity, signer, recipient.inboxUrl, String(recipient._id), verify);
}

/** One signed POST of `activity` to `inbox` (a shared inbox has no recipient account). */
export function inboxDelivery(
  activity: JsonObject,
  signer: Pick<AccountDoc, '_id'>,
  inbox: string,
  recipientAccountId: string | null,
  verify: NewEvent['verify'],
): NewEvent<'DeliveryRequested'> {
  return {
    type: 'DeliveryRequested',
    key: (hostOf(inbox) ?? inbox).toLowerCase(),
    payload: {
      activityId: String(activity.id),
      activityType: String(activity.type),
      inbox,
      signerAccountId: String(signer._id),
      recipientAccountId,
      body: JSON.stringify(activity),
      createdAt: new Date(),
    },
    verify,
  };
}

/**
 * QuoteRequest{object: our status, instrument: their post}: accepted when the status's policy lets
 * the requester quote (the post is recorded with its quote accepted, the author notified), else
 * rejected. Mastodon ignores requests for posts that are not ours or not public/unlisted.
 */
export async function onQuoteRequest(
  core: Core,
  actor: AccountDoc,
  activity: JsonObject,
  ingest: (object: JsonObject | null, uri: string) => Promise<StatusDoc | null>,
): Promise<void> {
  const requestId = idOf(activity.id);
  const objectUri = idOf(activity.object);
  const instrument = activity.instrument;
  const instrumentUri = idOf(instrument);
  if (!requestId || !objectUri || !instrumentUri || hostOf(requestId) !== hostOf(actor.uri)) return;
  const local = await collection(core.db, statuses).findOne({ uri: objectUri, local: true, deletedAt: null });
  if (!local || (local.visibility !== 'public' && local.visibility !== 'unlisted') || local.reblogOfId !== null) return;
  const author = await collection(core.db, accounts).findOne({ _id: local.accountId, domain: null });
  if (!author) return;
  const request = { id: requestId, actor: actor.uri, object: objectUri, instrument: instrumentUri };
  const verify = { collection: statuses.name, filter: { _id: local._id }, expect: 'exists' as const };
  if ((await decideQuote(core, local, actor)) === 'denied') {
    await core.outbox.write([directDelivery(renderRejectQuoteRequest(author, request), author, actor, verify)], () =>
      Promise.resolve(),
    );
    return;
  }
  const inlined = obj(instrument);
  const quoting = await ingest(
    inlined && hostOf(idOf(inlined.id) ?? '') === hostOf(actor.uri) ? inlined : null,
    instrumentUri,
  );
  // Sanity (Mastodon): the post is the requester's and quotes this status.
  if (!quoting?.quote || quoting.accountId !== actor._id || quoting.quote.quotedStatusId !== local._id) return;
  const stamp = quoteAuthorizationUri(core.config, author.username, quoting._id);
  // Mastodon's Quote#ensure_quoted_access: the quoted author is mentioned silently, so they may see it.
  await collection(core.db, statuses).updateOne(
    { _id: quoting._id, mentionedAccountIds: { $ne: author._id } },
    { $push: { mentionedAccountIds: author._id, silentMentionIds: author._id } },
  );
  const accepted = await changeQuoteState(core, quoting, ['pending', 'rejected'], 'accepted', {
    activityUri: requestId,
    approvalUri: stamp,
  });
  await core.outbox.write(
    [directDelivery(renderAcceptQuoteRequest(core, author, request, quoting._id), author, actor, verify)],
    () => Promise.resolve(),
  );
  if (accepted || quoting.quote.state === 'accepted')
    await notifyAndTell(core, [
      { type: 'quote', accountId: author._id, fromAccountId: actor._id, statusId: quoting._id },
    ]);
}

/** The local post whose QuoteRequest an Accept/Reject answers (its id, or the embedded request). */
async function ourQuoting(core: Core, actor: AccountDoc, activity: JsonObject): Promise<StatusDoc | null> {
  const inner = obj(activity.object);
  if (inner && !typeIs(inner, 'QuoteRequest')) return null;
  const requestId = idOf(activity.object);
  const instrument = inner ? idOf(inner.instrument) : null;
  const found = requestId
    ? await collection(core.db, statuses).findOne({ 'quote.activityUri': requestId, local: true, deletedAt: null })
    : instrument
      ? await collection(core.db, statuses).findOne({ uri: instrument, local: true, deletedAt: null })
      : null;
  return found?.quote?.quotedAccountId === actor._id ? found : null;
}

/** Accept{QuoteRequest}: our quote is approved by the stamp in `result` (on the quoted author's host). */
export async function onQuoteAccepted(core: Core, actor: AccountDoc, activity: JsonObject): Promise<boolean> {
  const quoting = await ourQuoting(core, actor, activity);
  if (!quoting) return false;
  const result = idOf(activity.result);
  if (!result || hostOf(result) !== hostOf(actor.uri)) return true;
  await changeQuoteState(core, quoting, ['pending'], 'accepted', {
    approvalUri: result,
    refreshAt: nextStampRefresh(),
  });
  return true;
}

/** Reject{QuoteRequest}: pending → rejected, accepted → revoked (Mastodon's Quote#reject!). */
export async function onQuoteRejected(core: Core, actor: AccountDoc, activity: JsonObject): Promise<boolean> {
  const quoting = await ourQuoting(core, actor, activity);
  if (!quoting) return false;
  await changeQuoteState(core, quoting, ['accepted'], 'revoked');
  await changeQuoteState(core, quoting, ['pending'], 'rejected');
  return true;
}

/** Delete of a stamp by the quoted author: the quotes it approved are revoked. */
export async function onStampDeleted(core: Core, actor: AccountDoc, stampUri: string): Promise<boolean> {
  const quoting = await collection(core.db, statuses)
    .find({ 'quote.approvalUri': stampUri, 'quote.quotedAccountId': actor._id, deletedAt: null })
    .toArray();
  for (const q of quoting) await changeQuoteState(core, q, ['accepted', 'pending'], 'revoked');
  return quoting.length > 0;
}

/** Mastodon's Quote::BACKGROUND_REFRESH_INTERVAL: a remote stamp is checked again after a week. */
export const STAMP_REFRESH_INTERVAL_MS = 7 * 86_400_000;
/** After a temporary failure (the server did not answer): try again in six hours (REFRESH_DEADLINE). */
const STAMP_RETRY_MS = 6 * 3_600_000;

export function nextStampRefresh(now = Date.now(), after = STAMP_REFRESH_INTERVAL_MS): Date {
  return new Date(now + after);
}

/**
 * The scheduler's re-verification of remote stamps (Mastodon's QuoteRefreshWorker and
 * VerifyQuoteService): each accepted remote quote whose refresh is due fetches its stamp again;
 * still served, it is checked again in a week; gone (404/410), the quote is revoked
 * (Quote#reject!); a server that does not answer leaves it as it is and is asked again later. Returns how many quotes it checked.
 */
export async function refreshStaleQuotes(core: Core, opts: { now?: number; limit?: number } = {}): Promise<number> {
  const now = opts.now ?? Date.now();
  const coll = collection(core.db, statuses);
  const due = await coll
    .find({ 'quote.refreshAt': { $lte: new Date(now) } })
    .sort({ 'quote.refreshAt': 1 })
    .limit(opts.limit ?? 50)
    .toArray();
  for (const quoting of due) {
    const q = quoting.quote;
    const reschedule = (after: number) =>
      coll.updateOne(
        { _id: quoting._id, 'quote.refreshAt': q?.refreshAt },
        { $set: { 'quote.refreshAt': nextStampRefresh(now, after) } },
      );
    if (!q || q.state !== 'accepted' || !q.approvalUri || quoting.deletedAt || q.quotedStatusId === null) {
      await coll.updateOne({ _id: quoting._id }, { $unset: { 'quote.refreshAt': '' } });
      continue;
    }
    const [quoted, quotedAuthor] = await Promise.all([
      coll.findOne({ _id: q.quotedStatusId }),
      q.quotedAccountId === null ? null : collection(core.db, accounts).findOne({ _id: q.quotedAccountId }),
    ]);
    if (!quoted || !quotedAuthor) {
      await coll.updateOne({ _id: quoting._id }, { $unset: { 'quote.refreshAt': '' } });
      continue;
    }
    try {
      // Still served: checked again in a week. One that no longer matches changes nothing, as in
      // Mastodon (only a stamp that is gone revokes).
      await fetchDocument(core, q.approvalUri);
      await reschedule(STAMP_REFRESH_INTERVAL_MS);
    } catch (err) {
      const status = err instanceof DocumentError ? err.status : null;
      if (status === 404 || status === 410) {
        core.logger.info({ statusId: String(quoting._id), approvalUri: q.approvalUri }, 'quote: stamp gone, revoked');
        await changeQuoteState(core, quoting, ['accepted'], 'revoked');
        await coll.updateOne({ _id: quoting._id }, { $unset: { 'quote.refreshAt': '' } });
      } else {
        if (!isFetchProblem(err)) throw err;
        await reschedule(STAMP_RETRY_MS);
      }
    }
  }
  return due.length;
}
