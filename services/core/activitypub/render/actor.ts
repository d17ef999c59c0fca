// Actor documents (federation reference §3): a local account as Person (Service for bots), and
// the instance actor as Application. Pure functions: the caller resolves image URLs (storage) and
// the key, so delivery can render an Update{Person} without a request context.
import type { Config } from '../../config.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import {
  actorCollections,
  instanceActorUri,
  keyIdOf,
  sharedInboxUri,
  featuredCollectionsUri,
  AS_PUBLIC,
  INSTANCE_ACTOR_USERNAME,
} from '../uris.ts';
import { localCanFeature } from '../../featuredCollections/featurePolicy.ts';
import { localBase } from '../../accounts/urls.ts';
import { ACTOR_CONTEXT, withContext, type JsonLd } from './context.ts';

export interface ImageRef {
  url: string;
  mediaType: string | null;
  /** Alt text, federated as the Image's `name` as Mastodon 4.6 does; "" or absent: none. */
  description?: string;
}

export interface EmojiRef {
  shortcode: string;
  url: string;
  mediaType: string | null;
  /** ActivityPub id of the emoji, when it has one. */
  uri?: string | null;
  updatedAt?: Date | null;
}

export interface ActorInput {
  account: Pick<
    AccountDoc,
    | 'username'
    | 'displayName'
    | 'note'
    | 'fields'
    | 'locked'
    | 'bot'
    | 'discoverable'
    | 'indexable'
    | 'memorial'
    | 'createdAt'
    | 'publicKeyPem'
    | 'suspendedAt'
    | 'attributionDomains'
  > &
    Partial<Pick<AccountDoc, '_id'>>;
  avatar: ImageRef | null;
  header: ImageRef | null;
  emojis?: EmojiRef[];
  /** Former actor ids (account aliases). */
  alsoKnownAs?: string[];
  /** Actor id of the account this one moved to. */
  movedTo?: string | null;
}

function image(ref: ImageRef | null): JsonLd | undefined {
  if (!ref) return undefined;
  const out: JsonLd = { type: 'Image' };
  if (ref.mediaType) out.mediaType = ref.mediaType;
  out.url = ref.url;
  if (ref.description) out.name = ref.description;
  return out;
}

export function renderEmoji(e: EmojiRef): JsonLd {
  const out: JsonLd = {};
  if (e.uri) out.id = e.uri;
  out.type = 'Emoji';
  out.name = `:${e.shortcode}:`;
  if (e.updatedAt) out.updated = e.updatedAt.toISOString();
  out.icon = e.mediaType ? { type: 'Image', mediaType: e.mediaType, url: e.url } : { type: 'Image', url: e.url };
  return out;
}

/** Creation day at midnight UTC, as Mastodon publishes `published` for actors. */
function midnight(date: Date): string {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
    .toISOString()
    .replace('.000Z', 'Z');
}

/** The actor object without @context (for embedding in Update). */
export function renderActorObject(config: Config, input: ActorInput): JsonLd {
  const a = input.account;
  const c = actorCollections(config, a.username);
  const suspended = a.suspendedAt !== null;
  const out: JsonLd = {
    id: c.uri,
    type: a.bot && !suspended ? 'Service' : 'Person',
    following: c.following,
    followers: c.followers,
    inbox: c.inbox,
    outbox: c.outbox,
    featured: c.featured,
    featuredTags: c.featuredTags,
    preferredUsername: a.username,
    name: suspended ? a.username : a.displayName || a.username,
    summary: suspended ? '' : a.note,
    url: c.url,
    manuallyApprovesFollowers: suspended ? false : a.locked,
    discoverable: suspended ? false : a.discoverable,
    indexable: suspended ? false : a.indexable,
    published: midnight(a.createdAt),
    memorial: a.memorial,
  };
  // Websites that may credit this account as author of a link (Mastodon 4.3+).
  if (!suspended && a.attributionDomains && a.attributionDomains.length > 0)
    out.attributionDomains = a.attributionDomains;
  if (a._id !== undefined) {
    // Collections (Mastodon 4.6): where they are listed, and who may feature this account.
    out.featuredCollections = featuredCollectionsUri(config, a._id);
    out.interactionPolicy = {
      canFeature: localCanFeature(a, { actor: c.uri, followers: c.followers }, AS_PUBLIC),
    };
  }
  if (suspended) out.suspended = true;
  if (!suspended && input.movedTo) out.movedTo = input.movedTo;
  if (!suspended && input.alsoKnownAs && input.alsoKnownAs.length > 0) out.alsoKnownAs = input.alsoKnownAs;
  out.publicKey = { id: c.keyId, owner: c.uri, publicKeyPem: a.publicKeyPem };
  out.tag = suspended ? [] : (input.emojis ?? []).map(renderEmoji);
  out.attachment = suspended ? [] : a.fields.map((f) => ({ type: 'PropertyValue', name: f.name, value: f.value }));
  out.endpoints = { sharedInbox: c.sharedInbox };
  if (!suspended) {
    const icon = image(input.avatar);
    const header = image(input.header);
    if (icon) out.icon = icon;
    if (header) out.image = header;
  }
  return out;
}

export function renderActor(config: Config, input: ActorInput): JsonLd {
  return withContext(ACTOR_CONTEXT, renderActorObject(config, input));
}

/** The instance actor: always fetchable without a signature; signs fetches that belong to nobody. */
export function renderInstanceActor(config: Config, publicKeyPem: string): JsonLd {
  const id = instanceActorUri(config);
  return withContext(ACTOR_CONTEXT, {
    id,
    type: 'Application',
    inbox: `${id}/inbox`,
    outbox: `${id}/outbox`,
    preferredUsername: INSTANCE_ACTOR_USERNAME,
    url: `${localBase(config)}/about/more?instance_actor=true`,
    manuallyApprovesFollowers: true,
    publicKey: { id: keyIdOf(id), owner: id, publicKeyPem },
    endpoints: { sharedInbox: sharedInboxUri(config) },
  });
}
