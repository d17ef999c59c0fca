// The public keys of remote actors we know, kept in each process for a minute: the inbox checks a
// signature per request, and reading the signer's account from MongoDB twice per request was most
// of the inbox's cost. What a cached key may get wrong is bounded:
// - a rotated key: a request signed with the new key fails against the cached one, and the
//   verifier then refetches the actor (one refetch on failure), which replaces the entry;
// - an actor updated or deleted by another process: its old key is accepted for at most the TTL
//   (Mastodon keeps a stored key until its next refresh, so this is not weaker); writes in this
//   process drop the entry at once (`forgetKnownKeys`).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { TtlCache } from '../cache/ttlCache.ts';

export interface KnownKey {
  publicKeyPem: string;
  /** The actor that owns the key. */
  owner: string;
  /** The owner's account domain (null for a local account). */
  domain: string | null;
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 20_000;

/** Key ids cached per owner, so forgetting an actor does not walk the cache. */
const byOwner = new Map<string, Set<string>>();

/** The owners a key id is indexed under: the actor its id names, and the key's owner. */
const ownersOf = (keyId: string, key: KnownKey | null) => new Set([keyDocumentUrl(keyId), key?.owner]);

function unindex(keyId: string, key: KnownKey | null): void {
  for (const owner of ownersOf(keyId, key)) {
    if (!owner) continue;
    const ids = byOwner.get(owner);
    ids?.delete(keyId);
    if (ids?.size === 0) byOwner.delete(owner);
  }
}

const cache = new TtlCache<string, KnownKey | null>(TTL_MS, MAX_ENTRIES, unindex);

/** Strips the fragment of a key id: the actor (Mastodon's `…#main-key`) or the key document. */
export function keyDocumentUrl(keyId: string): string {
  const hash = keyId.indexOf('#');
  return hash >= 0 ? keyId.slice(0, hash) : keyId;
}

function remember(keyId: string, key: KnownKey | null, ttlMs = TTL_MS): void {
  cache.set(keyId, key, Date.now(), ttlMs);
  for (const owner of ownersOf(keyId, key)) {
    if (!owner) continue;
    const ids = byOwner.get(owner) ?? new Set<string>();
    ids.add(keyId);
    byOwner.set(owner, ids);
  }
}

/**
 * The stored key named `keyId` (the account of its actor, or the account that lists that key id),
 * from this process's cache or MongoDB. null: not known here (the caller fetches it). Unknown
 * keys are remembered only briefly, so a first contact stored by another process shows soon.
 */
export async function findKnownKey(core: Core, keyId: string): Promise<KnownKey | null> {
  const hit = cache.get(keyId);
  if (hit !== undefined) return hit;
  const actorUri = keyDocumentUrl(keyId);
  const coll = collection(core.db, accounts);
  const projection = { uri: 1, domain: 1, keyId: 1, publicKeyPem: 1 };
  const known =
    (await coll.findOne({ uri: actorUri, domain: { $ne: null } }, { projection })) ??
    (await coll.findOne({ keyId }, { projection }));
  const key =
    known && known.publicKeyPem && (known.keyId === keyId || (!known.keyId && known.uri === actorUri))
      ? { publicKeyPem: known.publicKeyPem, owner: known.uri, domain: known.domain }
      : null;
  remember(keyId, key, key ? TTL_MS : 2_000);
  return key;
}

/** Records a key just fetched from its owner (replacing what was cached). */
export function rememberKey(keyId: string, key: KnownKey): void {
  remember(keyId, key);
}

/** Drops every cached key of an actor (its profile was updated, its key rotated, or it was deleted). */
export function forgetKnownKeys(actorUri: string): void {
  const ids = byOwner.get(actorUri);
  if (!ids) return;
  byOwner.delete(actorUri);
  // A key id left in another owner's set (a key that changed owner) is harmless: dropping an
  // id no longer cached does nothing.
  for (const keyId of ids) cache.delete(keyId);
}
