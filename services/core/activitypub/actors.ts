// Remote actors: reading an actor document into an account (same `accounts` collection as local
// ones, unique `uri`, `domain` = the host of the actor id), resolving an actor id (fetch with the
// origin rules, WebFinger round trip for new accounts), and the key resolver the HTTP signature
// check uses (known key → fetch by keyId, GoToSocial's key stubs included → refetch on failure).
import { requestCollections } from '../featuredCollections/fetchRequest.ts';
import { parseCanFeature } from '../featuredCollections/featurePolicy.ts';
import type { Core } from '../context.ts';
import { upsertRemoteEmojis } from '../emojis/remoteEmojis.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accounts, type AccountDoc, type ProfileField } from '../model/accounts.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import type { KeyResolver, ResolvedKey } from './httpSignatures.ts';
import { fetchDocument } from './fetchDocument.ts';
import { hostOf, isLocalUri, parseLocalUri } from './uris.ts';
import { asArray, idOf, obj, str, typeIs, type JsonObject } from './json.ts';
import { plainText, sanitizeRemoteHtml } from './sanitize.ts';
import { accountUpdatedEvent, IMAGE_DESCRIPTION_MAX } from '../accounts/profile.ts';
import { keepVerifications, needsLinkVerification } from '../accounts/linkVerification.ts';
import { webfinger } from './webfinger.ts';
import { findLocalAccountByUsername } from '../accounts/create.ts';
import { findKnownKey, forgetKnownKeys, keyDocumentUrl, rememberKey } from './knownKeys.ts';

export const ACTOR_TYPES = ['Application', 'Group', 'Organization', 'Person', 'Service'] as const;
const USERNAME = /^[a-z0-9_]+([.-]+[a-z0-9_]+)*$/i;
/** A remote account is refreshed when touched and older than this (Mastodon: 24 h). */
export const STALE_AFTER_MS = 24 * 3600_000;

export class ActorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ActorError';
  }
}

export function isActorDocument(doc: unknown): boolean {
  return typeIs(doc, ...ACTOR_TYPES);
}

function httpUrl(value: unknown): string | null {
  const s = typeof value === 'string' ? value : idOf(value);
  if (!s || s.length > 2048) return null;
  return hostOf(s) ? s : null;
}

/** The `url` of an actor or object: string, Link or array (text/html preferred); same host as `id` only. */
export function pageUrl(value: unknown, id: string): string | null {
  const candidates = asArray(value);
  const pick =
    candidates.find((c) => {
      const o = obj(c);
      return o && (o.mediaType === 'text/html' || o.mimeType === 'text/html');
    }) ?? candidates[0];
  const url = httpUrl(typeof pick === 'string' ? pick : (obj(pick)?.href ?? null));
  return url && hostOf(url) === hostOf(id) ? url : null;
}

function imageUrl(value: unknown): string | null {
  const first = asArray(value)[0];
  if (typeof first === 'string') return null; // a bare string would need a fetch (Mastodon); skip
  const o = obj(first);
  if (!o) return null;
  return httpUrl(asArray(o.url)[0] ?? o.href ?? null);
}

/** The alt text of an actor's icon or image (Mastodon 4.6 federates it as the Image's `name`). */
function imageName(value: unknown): string {
  const o = obj(asArray(value)[0]);
  return o ? plainText(o.name, IMAGE_DESCRIPTION_MAX) : '';
}

/** The public key entry named `keyId` (publicKey may be an object or an array; Misskey). */
export function publicKeyOf(doc: JsonObject, keyId: string | null): { id: string; pem: string } | null {
  for (const entry of asArray(doc.publicKey)) {
    const k = obj(entry);
    if (!k || typeof k.publicKeyPem !== 'string' || typeof k.id !== 'string') continue;
    if (keyId === null || k.id === keyId) return { id: k.id, pem: k.publicKeyPem };
  }
  return null;
}

function bool(value: unknown): boolean {
  return value === true;
}

function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const d = new Date(value);
  const t = d.getTime();
  return Number.isNaN(t) || t > Date.now() + 86_400_000 || t < 0 ? null : d;
}

function fields(doc: JsonObject): ProfileField[] {
  return asArray(doc.attachment)
    .map(obj)
    .filter((a): a is JsonObject => a !== null && a.type === 'PropertyValue')
    .slice(0, 16)
    .map((a) => ({
      name: plainText(a.name, 255),
      value: sanitizeRemoteHtml(str(a.value, 10_000) ?? ''),
      verifiedAt: null,
    }));
}

/** The Emoji tags of an actor or a status: shortcode and image URL. */
export function emojiTagsOf(doc: JsonObject): Array<{ shortcode: string; url: string }> {
  return asArray(doc.tag)
    .map(obj)
    .filter((t): t is JsonObject => t !== null && t.type === 'Emoji')
    .map((t) => ({ shortcode: String(t.name ?? '').replace(/^:|:$/g, ''), url: imageUrl(t.icon) ?? '' }))
    .filter((e) => /^[a-zA-Z0-9_]{2,}$/.test(e.shortcode) && e.url !== '')
    .slice(0, 50);
}

/** The fields of an account read from an actor document (checked: type, username, inbox, key). */
export function actorFields(
  doc: JsonObject,
  domain: string,
): Omit<
  AccountDoc,
  '_id' | 'followersCount' | 'followingCount' | 'statusesCount' | 'lastStatusAt' | 'createdAt' | 'pendingUser'
> & { published: Date | null } {
  const id = doc.id;
  if (typeof id !== 'string' || !hostOf(id)) throw new ActorError('actor id is not an http(s) URL');
  if (!isActorDocument(doc)) throw new ActorError('not an actor type');
  const username = typeof doc.preferredUsername === 'string' ? doc.preferredUsername : '';
  if (!USERNAME.test(username) || username.length > 200) throw new ActorError('invalid preferredUsername');
  const inbox = httpUrl(doc.inbox);
  if (!inbox) throw new ActorError('actor has no inbox');
  const key = publicKeyOf(doc, null);
  const endpoints = obj(doc.endpoints);
  const type = asArray(doc.type);
  const displayName = plainText(doc.name, 100);
  const now = new Date();
  return {
    username,
    usernameLower: username.toLowerCase(),
    domain,
    displayName,
    displayNameLower: displayName.toLowerCase(),
    note: sanitizeRemoteHtml(str(doc.summary, 100_000) ?? ''),
    noteSource: '',
    fields: fields(doc),
    fieldsSource: [],
    avatar: null,
    header: null,
    avatarRemoteUrl: imageUrl(doc.icon),
    headerRemoteUrl: imageUrl(doc.image),
    avatarDescription: imageName(doc.icon),
    headerDescription: imageName(doc.image),
    locked: bool(doc.manuallyApprovesFollowers),
    bot: type.includes('Service') || type.includes('Application'),
    group: type.includes('Group'),
    discoverable: bool(doc.discoverable),
    indexable: bool(doc.indexable),
    hideCollections: false,
    uri: id,
    url: pageUrl(doc.url, id) ?? id,
    inboxUrl: inbox,
    outboxUrl: httpUrl(doc.outbox) ?? '',
    sharedInboxUrl: httpUrl(endpoints?.sharedInbox) ?? httpUrl(doc.sharedInbox),
    followersUrl: httpUrl(doc.followers) ?? '',
    followingUrl: httpUrl(doc.following),
    featuredUrl: httpUrl(doc.featured),
    featuredTagsUrl: httpUrl(doc.featuredTags),
    featurePolicy: parseCanFeature(doc),
    featuredCollectionsUrl: httpUrl(doc.featuredCollections),
    publicKeyPem: key?.pem ?? '',
    keyId: key?.id ?? null,
    privateKeyPem: null,
    alsoKnownAs: asArray(doc.alsoKnownAs)
      .map((v) => httpUrl(v))
      .filter((v): v is string => v !== null)
      .slice(0, 20),
    emojis: emojiTagsOf(doc),
    memorial: bool(doc.memorial),
    suspendedAt: null,
    silencedAt: null,
    movedToAccountId: null,
    lastFetchedAt: now,
    updatedAt: now,
    published: date(doc.published),
  };
}

export async function findAccountByUri(core: Core, uri: string): Promise<AccountDoc | null> {
  const local = parseLocalUri(core.config, uri);
  if (local?.kind === 'actor' || local?.kind === 'profile') return findLocalAccountByUsername(core, local.username);
  if (isLocalUri(core.config, uri)) return null;
  return collection(core.db, accounts).findOne({ uri });
}

/**
 * Creates or updates the account of an actor document whose origin is proven (fetched from its own
 * id, or sent by itself in a signed Update). `domain` is the handle's domain (WebFinger), default
 * the host of the id.
 */
export async function upsertRemoteActor(
  core: Core,
  doc: JsonObject,
  domain?: string,
  opts: { collections?: boolean } = {},
): Promise<AccountDoc> {
  const id = typeof doc.id === 'string' ? doc.id : '';
  if (isLocalUri(core.config, id)) throw new ActorError('a local id cannot be a remote actor');
  const host = hostOf(id);
  if (!host) throw new ActorError('actor id is not an http(s) URL');
  const { published, ...fields } = actorFields(doc, domain ?? host);
  const coll = collection(core.db, accounts);
  const policy = await domainPolicy(core, fields.domain);
  if (policy.rejected) throw new ActorError(`domain ${fields.domain} is blocked`);
  if (policy.rejectMedia) {
    fields.avatarRemoteUrl = null;
    fields.headerRemoteUrl = null;
    fields.emojis = [];
  }
  const existing =
    (await coll.findOne({ uri: id })) ??
    (await coll.findOne({ usernameLower: fields.usernameLower, domain: fields.domain }));
  if (existing) {
    // The same server re-created the account (new id for the same handle), or a plain refresh.
    // Our copies of the images stay: a new remote URL makes them stale (remoteProfileImages.ts).
    const { suspendedAt: _s, silencedAt: _l, movedToAccountId: _m, avatar: _a, header: _h, ...update } = fields;
    void _s;
    void _l;
    void _m;
    void _a;
    void _h;
    update.fields = keepVerifications(existing.fields, update.fields);
    await coll.updateOne({ _id: existing._id }, { $set: update });
    if (update.avatarRemoteUrl !== existing.avatarRemoteUrl || update.headerRemoteUrl !== existing.headerRemoteUrl)
      await requestProfileImages(core, existing._id);
    await upsertRemoteEmojis(core, update.domain, update.emojis ?? []);
    forgetKnownKeys(existing.uri);
    forgetKnownKeys(id);
    const moved = await movedTarget(core, doc, existing);
    if (moved !== undefined) await coll.updateOne({ _id: existing._id }, { $set: { movedToAccountId: moved } });
    const updated = { ...existing, ...update, ...(moved !== undefined ? { movedToAccountId: moved } : {}) };
    if (needsLinkVerification(core, updated)) await requestLinkVerification(core, updated);
    return updated;
  }
  const account: AccountDoc = {
    _id: await nextSerialId(core.db, 'accounts'),
    ...fields,
    silencedAt: policy.silenced ? new Date() : null,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    pendingUser: false,
    // Nobody blocks, mutes or lists an account before it exists (feeds/fanOutFilters.ts).
    fanOutFilters: false,
    createdAt: published ?? new Date(),
  };
  try {
    await coll.insertOne(account);
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const winner = await coll.findOne({ uri: id });
    if (!winner) throw err;
    return winner;
  }
  if (account.avatarRemoteUrl || account.headerRemoteUrl) await requestProfileImages(core, account._id);
  await upsertRemoteEmojis(core, account.domain, account.emojis ?? []);
  if (needsLinkVerification(core, account)) await requestLinkVerification(core, account);
  if (account.featuredCollectionsUrl && opts.collections !== false) await requestCollections(core, account);
  return account;
}

/**
 * Asks the link-previews pipeline to check the account's field links for rel="me" (Mastodon's
 * VerifyAccountLinksWorker after ProcessAccountService). Best effort, as the images are.
 */
async function requestLinkVerification(core: Core, account: AccountDoc): Promise<void> {
  try {
    await core.outbox.publishDirect([accountUpdatedEvent(account, ['fields'])]);
  } catch (err) {
    core.logger.warn({ err, accountId: String(account._id) }, 'link verification not queued');
  }
}

/**
 * Asks the media pipeline to copy an account's images here. Best effort: what it misses, the
 * media proxy fetches on first request (media/remoteProfileImages.ts).
 */
async function requestProfileImages(core: Core, accountId: bigint): Promise<void> {
  try {
    await core.outbox.publishDirect([
      { type: 'ProfileImagesFetchRequested', key: String(accountId), payload: { accountId: String(accountId) } },
    ]);
  } catch (err) {
    core.logger.warn({ err, accountId: String(accountId) }, 'profile images fetch not queued');
  }
}

/** `movedTo` as an account id: undefined when unchanged or unknown (the target is not fetched here). */
async function movedTarget(core: Core, doc: JsonObject, existing: AccountDoc): Promise<bigint | null | undefined> {
  const target = httpUrl(doc.movedTo);
  if (!target) return existing.movedToAccountId === null ? undefined : null;
  const account = await findAccountByUri(core, target);
  return account && account._id !== existing.movedToAccountId ? account._id : undefined;
}

/** WebFinger round trip: the handle's domain when `acct:username@host` points back at the id. */
async function confirmedDomain(core: Core, doc: JsonObject): Promise<string | undefined> {
  const id = String(doc.id);
  const host = hostOf(id) as string;
  try {
    const wf = await webfinger(core, `${String(doc.preferredUsername)}@${host}`);
    if (wf.actor !== id) throw new ActorError(`WebFinger for ${wf.subject} names another actor`);
    return wf.domain;
  } catch (err) {
    if (err instanceof ActorError) throw err;
    // No WebFinger: the handle stays on the id's host, which the id proves anyway.
    core.logger.debug({ err, actor: id }, 'WebFinger round trip failed; using the actor host');
    return undefined;
  }
}

export interface ResolveActorOptions {
  /** Fetch even if known and fresh. */
  refresh?: boolean;
  /** Whether a newly stored actor's collections are read (not for accounts met in a collection). */
  collections?: boolean;
}

/**
 * The account of an actor id: known and fresh, or fetched (origin rules) and stored. null when the
 * actor cannot be fetched or is not a valid actor. Local ids give local accounts.
 */
export async function resolveActor(
  core: Core,
  uri: string,
  opts: ResolveActorOptions = {},
): Promise<AccountDoc | null> {
  const known = await findAccountByUri(core, uri);
  if (known && known.domain === null) return known;
  if (isLocalUri(core.config, uri) || !hostOf(uri)) return null;
  const fresh = known?.lastFetchedAt && Date.now() - known.lastFetchedAt.getTime() < STALE_AFTER_MS;
  if (known && !opts.refresh && (fresh || !known.lastFetchedAt)) return known;
  if (known?.domain && (await domainPolicy(core, known.domain)).rejected) return known;
  try {
    const doc = await fetchDocument(core, uri);
    if (!isActorDocument(doc)) return known;
    const domain = known ? (known.domain ?? undefined) : await confirmedDomain(core, doc);
    return await upsertRemoteActor(core, doc, domain, { collections: opts.collections });
  } catch (err) {
    core.logger.debug({ err, uri }, 'actor fetch failed');
    return known;
  }
}

async function fetchActorForKey(core: Core, keyId: string): Promise<AccountDoc | null> {
  const url = keyDocumentUrl(keyId);
  if (!hostOf(url) || isLocalUri(core.config, url)) return null;
  const doc = await fetchDocument(core, url, { idUnknown: true });
  let actorDoc: JsonObject;
  if (isActorDocument(doc)) {
    // A full actor, or GoToSocial's stub (id + publicKey only): the full one comes from its id.
    actorDoc = typeof doc.inbox === 'string' ? doc : await fetchDocument(core, String(doc.id));
  } else if (typeof doc.publicKeyPem === 'string' && typeof doc.owner === 'string') {
    // A separate key document: its owner must claim it back.
    actorDoc = await fetchDocument(core, doc.owner);
  } else return null;
  if (!isActorDocument(actorDoc) || !publicKeyOf(actorDoc, keyId)) return null;
  const known = await findAccountByUri(core, String(actorDoc.id));
  const domain = known?.domain ?? (await confirmedDomain(core, actorDoc));
  const account = await upsertRemoteActor(core, actorDoc, domain);
  const key = publicKeyOf(actorDoc, keyId);
  return key ? { ...account, publicKeyPem: key.pem, keyId: key.id } : account;
}

/** The KeyResolver of inbound signature checks (and of signed GETs). */
export function keyResolver(core: Core): KeyResolver {
  return async (keyId, { refresh }): Promise<ResolvedKey | null> => {
    if (!refresh) {
      const known = await findKnownKey(core, keyId);
      if (known) return { publicKeyPem: known.publicKeyPem, owner: known.owner };
    }
    const fetched = await fetchActorForKey(core, keyId);
    if (!fetched) return null;
    rememberKey(keyId, { publicKeyPem: fetched.publicKeyPem, owner: fetched.uri, domain: fetched.domain });
    return { publicKeyPem: fetched.publicKeyPem, owner: fetched.uri, fresh: true };
  };
}
