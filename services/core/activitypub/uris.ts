// Our ActivityPub ids and web addresses, in Mastodon's layout (federation reference §1.6), so peers
// recognise them and Mastodon's own habits (key id = actor#main-key, shared inbox /inbox) hold.
// The scheme and host come from config.baseUrl (WEB_DOMAIN; http:// when LOCAL_HTTPS=false); the
// account and status helpers of accounts/urls.ts and statuses/urls.ts are the single source for
// the forms they already define.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Id } from '../ids.ts';
import { localActorUrls, localBase } from '../accounts/urls.ts';
import { localReblogUri, localStatusUri, localStatusUrl, tagUrl } from '../statuses/urls.ts';

export { localActorUrls, localBase, localReblogUri, localStatusUri, localStatusUrl, tagUrl };

export const AS_PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
/** Forms of the public collection other servers send (Mastodon accepts all three). */
export const PUBLIC_FORMS: ReadonlySet<string> = new Set([AS_PUBLIC, 'as:Public', 'Public']);

export function actorUri(config: Config, username: string): string {
  return localActorUrls(config, username).uri;
}

/** The key id of an actor: `<actor>#main-key`, as Mastodon writes it. */
export function keyIdOf(actor: string): string {
  return `${actor}#main-key`;
}

export interface ActorCollections {
  uri: string;
  url: string;
  keyId: string;
  inbox: string;
  outbox: string;
  followers: string;
  following: string;
  featured: string;
  featuredTags: string;
  sharedInbox: string;
}

/** Every address of a local actor. */
export function actorCollections(config: Config, username: string): ActorCollections {
  const u = localActorUrls(config, username);
  return {
    uri: u.uri,
    url: u.url,
    keyId: keyIdOf(u.uri),
    inbox: u.inboxUrl,
    outbox: u.outboxUrl,
    followers: u.followersUrl,
    following: `${u.uri}/following`,
    featured: u.featuredUrl,
    featuredTags: `${u.uri}/collections/tags`,
    sharedInbox: u.sharedInboxUrl,
  };
}

export function sharedInboxUri(config: Config): string {
  return `${localBase(config)}/inbox`;
}

/** The instance actor (type Application): signs fetches that belong to nobody. */
export function instanceActorUri(config: Config): string {
  return `${localBase(config)}/actor`;
}

/** preferredUsername of the instance actor (Mastodon's newer servers use this exact name). */
export const INSTANCE_ACTOR_USERNAME = 'mastodon.internal';

export function statusUri(config: Config, username: string, id: Id): string {
  return localStatusUri(config, username, id);
}

export function statusUrl(config: Config, username: string, id: Id): string {
  return localStatusUrl(config, username, id);
}

/** Id of the Create activity of a status (and of the Announce of a reblog, which is a status too). */
export function statusActivityUri(config: Config, username: string, id: Id): string {
  return localReblogUri(config, username, id);
}

/** The QuoteRequest a local quote of a remote status sends (Mastodon: `<actor>/quote_requests/<uuid>`). */
export function quoteRequestUri(config: Config, username: string, quotingId: Id): string {
  return `${actorUri(config, username)}/quote_requests/${quotingId}`;
}

/** The QuoteAuthorization stamp a local author gives a quote of their status, dereferenceable. */
export function quoteAuthorizationUri(config: Config, username: string, quotingId: Id): string {
  return `${actorUri(config, username)}/quote_authorizations/${quotingId}`;
}

/**
 * Collections (Mastodon 4.6 FEP-7aa9), under Mastodon's id-based `/ap/users/:account_id` layout:
 * the actor's `featuredCollections`, each FeaturedCollection, its FeaturedItems and the
 * FeatureAuthorization stamp a local featured account gives.
 */
export function featuredCollectionsUri(config: Config, accountId: Id): string {
  return `${localBase(config)}/ap/users/${accountId}/featured_collections`;
}
export function featuredCollectionUri(config: Config, accountId: Id, collectionId: Id): string {
  return `${localBase(config)}/ap/users/${accountId}/collections/${collectionId}`;
}
export function collectionItemUri(config: Config, accountId: Id, itemId: Id): string {
  return `${localBase(config)}/ap/users/${accountId}/collection_items/${itemId}`;
}
export function featureAuthorizationUri(config: Config, featuredAccountId: Id, itemId: Id): string {
  return `${localBase(config)}/ap/users/${featuredAccountId}/feature_authorizations/${itemId}`;
}

export function statusRepliesUri(statusUri: string): string {
  return `${statusUri}/replies`;
}

export function statusLikesUri(statusUri: string): string {
  return `${statusUri}/likes`;
}

export function statusSharesUri(statusUri: string): string {
  return `${statusUri}/shares`;
}

// Activity ids in Mastodon's forms (federation reference §6.3). Fragment ids are not
// dereferenceable; Mastodon neither needs nor expects them to be.
export const activityIds = {
  update: (objectUri: string, at: Date) => `${objectUri}#updates/${Math.floor(at.getTime() / 1000)}`,
  deleteStatus: (statusUri: string) => `${statusUri}#delete`,
  deleteActor: (actor: string) => `${actor}#delete`,
  undoAnnounce: (actor: string, reblogId: Id) => `${actor}#announces/${reblogId}/undo`,
  like: (actor: string, favouriteId: Id) => `${actor}#likes/${favouriteId}`,
  undoLike: (actor: string, favouriteId: Id) => `${actor}#likes/${favouriteId}/undo`,
  follow: (actor: string, followId: Id) => `${actor}#follows/${followId}`,
  undoFollow: (actor: string, followId: Id) => `${actor}#follows/${followId}/undo`,
  accept: (actor: string, requestId: Id) => `${actor}#accepts/follows/${requestId}`,
  reject: (actor: string, requestId: Id) => `${actor}#rejects/follows/${requestId}`,
  block: (actor: string, blockId: Id) => `${actor}#blocks/${blockId}`,
  undoBlock: (actor: string, blockId: Id) => `${actor}#blocks/${blockId}/undo`,
  move: (actor: string, migrationId: Id | string) => `${actor}#moves/${migrationId}`,
  vote: (actor: string, voteId: Id | string) => `${actor}#votes/${voteId}`,
  voteActivity: (actor: string, voteId: Id | string) => `${actor}#votes/${voteId}/activity`,
  /** Reports and other activities without a natural owner: a random URL on our host. */
  random: (config: Config) => `${localBase(config)}/${randomUUID()}`,
};

export type LocalUri =
  | { kind: 'actor'; username: string }
  | { kind: 'instanceActor' }
  | { kind: 'status'; username: string; id: Id }
  | { kind: 'statusActivity'; username: string; id: Id }
  | { kind: 'collection'; username: string; name: 'inbox' | 'outbox' | 'followers' | 'following' | 'featured' | 'tags' }
  | { kind: 'profile'; username: string }
  | { kind: 'statusPage'; username: string; id: Id };

const USERNAME = '([A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*)';
const ROUTES: Array<[RegExp, (m: RegExpMatchArray) => LocalUri]> = [
  [new RegExp(`^/users/${USERNAME}$`), (m) => ({ kind: 'actor', username: m[1] })],
  [new RegExp(`^/users/${USERNAME}/statuses/(\\d{1,20})$`), (m) => status('status', m)],
  [new RegExp(`^/users/${USERNAME}/statuses/(\\d{1,20})/activity$`), (m) => status('statusActivity', m)],
  [
    new RegExp(`^/users/${USERNAME}/(inbox|outbox|followers|following)$`),
    (m) => ({ kind: 'collection', username: m[1], name: m[2] as 'inbox' }),
  ],
  [
    new RegExp(`^/users/${USERNAME}/collections/(featured|tags)$`),
    (m) => ({ kind: 'collection', username: m[1], name: m[2] as 'featured' }),
  ],
  [new RegExp(`^/@${USERNAME}$`), (m) => ({ kind: 'profile', username: m[1] })],
  [new RegExp(`^/@${USERNAME}/(\\d{1,20})$`), (m) => status('statusPage', m)],
  [/^\/actor$/, () => ({ kind: 'instanceActor' })],
];

function status(kind: 'status' | 'statusActivity' | 'statusPage', m: RegExpMatchArray): LocalUri {
  return { kind, username: m[1], id: BigInt(m[2]) };
}

/** Whether a URL is on this server (scheme, host and port of our base URL). */
export function isLocalUri(config: Config, uri: string): boolean {
  try {
    return new URL(uri).origin === new URL(localBase(config)).origin;
  } catch {
    return false;
  }
}

/** What a URL on this server names; null for other hosts and for paths that name nothing here. */
export function parseLocalUri(config: Config, uri: string): LocalUri | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.origin !== new URL(localBase(config)).origin) return null;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  for (const [re, make] of ROUTES) {
    const m = path.match(re);
    if (m) {
      const parsed = make(m);
      if ('id' in parsed && parsed.id > 0x7fffffffffffffffn) return null;
      return parsed;
    }
  }
  return null;
}

/** Host (with port) of an http(s) URL, lower-cased; null when not one. */
export function hostOf(uri: string): string | null {
  try {
    const u = new URL(uri);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
    return u.host.toLowerCase();
  } catch {
    return null;
  }
}
