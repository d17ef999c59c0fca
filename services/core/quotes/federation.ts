// Quote posts across servers (FEP-044f as Mastodon 4.5 speaks it): the QuoteAuthorization stamp a
// local author gives a quote of their status, served at its own URL; the Accept / Reject that
// answer a QuoteRequest; the QuoteRequest a local quote of a remote status sends; and the Delete
// of a stamp that revokes it.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { AS_PUBLIC, quoteAuthorizationUri } from '../activitypub/uris.ts';
import { QUOTE_CONTEXT, withContext, type JsonLd } from '../activitypub/render/context.ts';
import { DocumentUnavailable, servedAccount } from '../activitypub/documents.ts';
import type { NewEvent } from '../events/outbox.ts';
import { directDelivery, inboxDelivery } from './ingress.ts';
import { statusReach } from '../activitypub/delivery/planHelpers.ts';
import { inboxesOf } from '../activitypub/delivery/audience.ts';

/** The stamp as its author serves it (null: no accepted quote of theirs by that id). */
export function renderQuoteAuthorization(
  core: Core,
  quotedAuthor: Pick<AccountDoc, 'username' | 'uri'>,
  quoting: Pick<StatusDoc, '_id' | 'uri'>,
  quotedUri: string,
): JsonLd {
  return {
    id: quoteAuthorizationUri(core.config, quotedAuthor.username, quoting._id),
    type: 'QuoteAuthorization',
    attributedTo: quotedAuthor.uri,
    interactingObject: quoting.uri,
    interactionTarget: quotedUri,
  };
}

/** GET /users/:username/quote_authorizations/:id: the stamp of an accepted quote, else 404. */
export async function quoteAuthorizationDocument(core: Core, username: string, quotingId: Id): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  const quoting = await collection(core.db, statuses).findOne({
    _id: quotingId,
    'quote.quotedAccountId': author._id,
    'quote.state': 'accepted',
    deletedAt: null,
  });
  const quotedId = quoting?.quote?.quotedStatusId ?? null;
  const quoted =
    quotedId === null ? null : await collection(core.db, statuses).findOne({ _id: quotedId, deletedAt: null });
  if (!quoting || !quoted) throw new DocumentUnavailable(404, 'Record not found');
  return withContext(QUOTE_CONTEXT, renderQuoteAuthorization(core, author, quoting, quoted.uri));
}

/** The QuoteRequest of a local quote of a remote status (Mastodon's QuoteRequestSerializer). */
export function renderQuoteRequest(quoter: Pick<AccountDoc, 'uri'>, quoting: StatusDoc, quotedUri: string): JsonLd {
  return withContext(QUOTE_CONTEXT, {
    id: quoting.quote?.activityUri,
    type: 'QuoteRequest',
    actor: quoter.uri,
    object: quotedUri,
    instrument: quoting.uri,
  });
}

/** Accept{QuoteRequest} with the stamp as `result`. */
export function renderAcceptQuoteRequest(
  core: Core,
  quotedAuthor: Pick<AccountDoc, 'username' | 'uri'>,
  request: { id: string; actor: string; object: string; instrument: string },
  quotingId: Id,
): JsonLd {
  return withContext(QUOTE_CONTEXT, {
    id: `${quotedAuthor.uri}#accepts/quote_requests/${quotingId}`,
    type: 'Accept',
    actor: quotedAuthor.uri,
    object: { ...request, type: 'QuoteRequest' },
    result: quoteAuthorizationUri(core.config, quotedAuthor.username, quotingId),
  });
}

/** Reject{QuoteRequest}. */
export function renderRejectQuoteRequest(
  quotedAuthor: Pick<AccountDoc, 'uri'>,
  request: { id: string; actor: string; object: string; instrument: string },
): JsonLd {
  return withContext(QUOTE_CONTEXT, {
    id: `${quotedAuthor.uri}#rejects/quote_requests/${encodeURIComponent(request.id)}`,
    type: 'Reject',
    actor: quotedAuthor.uri,
    object: { ...request, type: 'QuoteRequest' },
  });
}

/** Delete of a stamp: the quote is revoked (Mastodon's DeleteQuoteAuthorizationSerializer). */
export function renderDeleteQuoteAuthorization(quotedAuthor: Pick<AccountDoc, 'uri'>, stampUri: string): JsonLd {
  return withContext(QUOTE_CONTEXT, {
    id: `${stampUri}#delete`,
    type: 'Delete',
    actor: quotedAuthor.uri,
    object: stampUri,
    to: [AS_PUBLIC],
  });
}

/** The QuoteRequest a new local quote of a remote post sends to the quoted author's inbox. */
export async function quoteRequestEvents(
  core: Core,
  quoter: AccountDoc,
  quoting: StatusDoc,
  quoted: StatusDoc,
): Promise<NewEvent<'DeliveryRequested'>[]> {
  if (quoted.local || !quoting.quote?.activityUri) return [];
  const quotedAuthor = await collection(core.db, accounts).findOne({ _id: quoted.accountId });
  if (!quotedAuthor || quotedAuthor.domain === null) return [];
  const verify = { collection: statuses.name, filter: { _id: quoting._id }, expect: 'exists' as const };
  return [directDelivery(renderQuoteRequest(quoter, quoting, quoted.uri), quoter, quotedAuthor, verify)];
}

/**
 * Revoking a quote of one of our posts: the stamp's Delete goes to the reach of both the quoting
 * and the quoted post, interactors included (Mastodon's RevokeQuoteService), so every server that
 * shows the quote learns it is revoked, not only the quoter's.
 */
export async function stampDeletionEvents(
  core: Core,
  quotedAuthor: Pick<AccountDoc, '_id' | 'username' | 'uri'>,
  quoting: StatusDoc,
): Promise<NewEvent<'DeliveryRequested'>[]> {
  const quotedId = quoting.quote?.quotedStatusId ?? null;
  const quoted = quotedId === null ? null : await collection(core.db, statuses).findOne({ _id: quotedId });
  // A quoted post already deleted has federated its own deletion.
  if (!quoted || quoted.deletedAt) return [];
  // The quoter's own server first (its post is the one revoked), then both posts' audiences.
  const inboxes = await inboxesOf(core, [quoting.accountId]);
  for (const status of [quoting, quoted])
    for (const [inbox, recipient] of await statusReach(core, status, true))
      if (!inboxes.has(inbox)) inboxes.set(inbox, recipient);
  if (inboxes.size === 0) return [];
  const stamp = quoting.quote?.approvalUri ?? quoteAuthorizationUri(core.config, quotedAuthor.username, quoting._id);
  const activity = renderDeleteQuoteAuthorization(quotedAuthor, stamp);
  const verify = { collection: statuses.name, filter: { _id: quoting._id }, expect: 'exists' as const };
  return [...inboxes].map(([inbox, recipient]) => inboxDelivery(activity, quotedAuthor, inbox, recipient, verify));
}
