// Receiving an activity at an inbox (federation reference §7.2, §9.1): the cheap checks first
// (signed at all, JSON within the depth limit), then the HTTP signature (key fetched or cached),
// the signer's domain against the instance's blocks, signer = actor; then the activity goes to the
// `inbound` topic keyed by the actor and the sender gets 202. Everything slow happens in the
// ingress pipeline. Nothing is stored for a request that fails a check.
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import { verifyRequest, type HeaderBag } from './httpSignatures.ts';
import { keyResolver, findAccountByUri } from './actors.ts';
import { findKnownKey } from './knownKeys.ts';
import { idOf, parseJsonObject, type JsonObject } from './json.ts';
import { hostOf } from './uris.ts';
import { markHostAvailable } from './delivery/hostState.ts';
import { TtlCache } from '../cache/ttlCache.ts';

export const INBOX_MAX_BYTES = 1024 * 1024;

/** Activity types the ingress pipeline acts on; others are acknowledged and dropped. */
export const HANDLED_TYPES: ReadonlySet<string> = new Set([
  'Create',
  'Update',
  'Delete',
  'Follow',
  'Accept',
  'Reject',
  'Undo',
  'Like',
  'Announce',
  'Block',
  'Flag',
  'Add',
  'Remove',
  'Move',
  // FEP-044f quote requests (Mastodon 4.5).
  'QuoteRequest',
  // Collections (Mastodon 4.6): a curator asks to feature one of our accounts.
  'FeatureRequest',
  'Collection',
  'OrderedCollection',
  'CollectionPage',
  'OrderedCollectionPage',
]);

export interface InboxRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: HeaderBag;
  body: Buffer;
}

export type InboxOutcome = { status: 202; queued: boolean } | { status: 400 | 401 | 403; error: string };

function header(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** An account's Delete of itself that we never knew: nothing to do and nothing to verify (its key is gone). */
async function isDeleteOfUnknownActor(core: Core, activity: JsonObject): Promise<boolean> {
  if (activity.type !== 'Delete') return false;
  const actor = idOf(activity.actor);
  if (!actor || idOf(activity.object) !== actor) return false;
  return (await findAccountByUri(core, actor)) === null;
}

/** Hosts known not to be backed off, per process, for a second: one Redis read per host and second. */
const upHosts = new TtlCache<string, true>(1_000, 10_000);

async function hostUp(core: Core, host: string): Promise<void> {
  const now = Date.now();
  if (upHosts.get(host, now)) return;
  if (await markHostAvailable(core.redis, host)) return;
  upHosts.set(host, true, now);
}

export async function receiveInboxRequest(
  core: Core,
  req: InboxRequest,
  inboxAccount: AccountDoc | null,
): Promise<InboxOutcome> {
  if (!header(req.headers, 'signature')) {
    return {
      status: 401,
      error: header(req.headers, 'signature-input')
        ? 'RFC 9421 signatures are not supported; sign with draft-cavage HTTP Signatures'
        : 'Request not signed',
    };
  }
  const activity = parseJsonObject(req.body.toString('utf8'));
  if (!activity) return { status: 400, error: 'Error parsing JSON' };
  if (await isDeleteOfUnknownActor(core, activity)) return { status: 202, queued: false };

  const verified = await verifyRequest(
    { method: req.method, url: req.url, headers: req.headers, body: req.body },
    keyResolver(core),
  );
  if (!verified.ok) return { status: 401, error: verified.error };
  const signerHost = hostOf(verified.owner);
  // The signer's account domain (its handle's; usually the host), as the resolver just found it.
  const signer = await findKnownKey(core, verified.keyId);
  if ((await domainPolicy(core, signer?.domain ?? signerHost)).rejected)
    return { status: 403, error: 'Your domain is not allowed to federate with this server' };
  // A correctly signed request shows the server is up: deliveries parked for it resume.
  if (signerHost) await hostUp(core, signerHost);

  // The signer must be the actor (no Linked Data Signature path: a relayed or forwarded activity
  // is acknowledged and dropped; its origin delivers it itself).
  const actor = idOf(activity.actor) ?? verified.owner;
  const type = typeof activity.type === 'string' ? activity.type : null;
  if (actor !== verified.owner || type === null || !HANDLED_TYPES.has(type)) {
    core.logger.debug({ type, actor, signer: verified.owner }, 'inbox: activity acknowledged and dropped');
    return { status: 202, queued: false };
  }
  await core.outbox.publishDirect([
    {
      type: 'InboundActivityReceived',
      key: verified.owner,
      payload: {
        activity: req.body.toString('utf8'),
        signerUri: verified.owner,
        keyId: verified.keyId,
        inboxAccountId: inboxAccount ? String(inboxAccount._id) : null,
        receivedAt: new Date(),
      },
    },
  ]);
  return { status: 202, queued: true };
}
