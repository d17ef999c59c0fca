// Accounts: local and remote in one collection (`domain` null for local), with their ActivityPub
// addresses from day one. Counts are denormalised and maintained by the operations that change them.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { defineDocView } from '../db/docViews.ts';

export interface ProfileField {
  name: string;
  value: string;
  verifiedAt: Date | null;
}

export interface StoredImage {
  /** Storage key of the processed file (see core/media storage). */
  path: string;
  /** Static (first-frame) version for animated images; same as path otherwise. */
  staticPath: string;
  contentType: string;
  /** Remote accounts: the remote image this is a copy of (see media/remoteProfileImages.ts). */
  remoteUrl?: string;
}

/** A key of a feature (collection) sub-policy, as Mastodon 4.6 renders `feature_approval`. */
export type FeaturePolicyKey = 'public' | 'followers' | 'following' | 'disabled' | 'unsupported_policy';
export interface FeaturePolicy {
  automatic: FeaturePolicyKey[];
  manual: FeaturePolicyKey[];
}

export interface AccountDoc {
  _id: Id;
  username: string;
  /** Lower-cased username for case-insensitive uniqueness and lookup. */
  usernameLower: string;
  /** null for local accounts. */
  domain: string | null;
  displayName: string;
  /** Lower-cased display name: account search matches its prefix through an index. */
  displayNameLower?: string;
  /** Rendered HTML of the bio. */
  note: string;
  /** Raw bio as typed (local accounts). */
  noteSource: string;
  fields: ProfileField[];
  /** Raw profile fields as typed (local accounts). */
  fieldsSource: { name: string; value: string }[];
  avatar: StoredImage | null;
  header: StoredImage | null;
  /** Remote accounts: avatar/header URLs as published by their server. */
  avatarRemoteUrl?: string | null;
  headerRemoteUrl?: string | null;
  /** Alt text of the avatar and header (Mastodon 4.6 avatar_description/header_description; actor icon.name/image.name). */
  avatarDescription?: string;
  headerDescription?: string;
  locked: boolean;
  bot: boolean;
  group: boolean;
  discoverable: boolean;
  indexable: boolean;
  hideCollections: boolean;
  /** Profile tabs (Mastodon 4.6 show_media, show_media_replies, show_featured); unset: shown. */
  showMedia?: boolean;
  showMediaReplies?: boolean;
  showFeatured?: boolean;
  /**
   * Remote accounts: the actor's `interactionPolicy.canFeature` (null or unset: it published none).
   * Local accounts follow `discoverable`/`locked` (featuredCollections/featurePolicy.ts).
   */
  featurePolicy?: FeaturePolicy | null;
  /** Local accounts: websites allowed to credit them as author (Mastodon 4.4 `attribution_domains`). */
  attributionDomains?: string[];
  /** Opted out of search engine indexing (Mastodon's setting_noindex): public pages carry `noindex`. */
  noindex?: boolean;
  /** ActivityPub id, e.g. https://example.com/users/alice */
  uri: string;
  /** Profile page, e.g. https://example.com/@alice */
  url: string;
  inboxUrl: string;
  outboxUrl: string;
  sharedInboxUrl: string | null;
  followersUrl: string;
  featuredUrl?: string | null;
  publicKeyPem: string;
  /** Local accounts only. */
  privateKeyPem: string | null;
  followersCount: number;
  followingCount: number;
  statusesCount: number;
  /** The marks of the latest counter changes, so that a retried one counts once (db/countOnce.ts). */
  countMarks?: string[];
  /**
   * Whether anyone may block, mute or list this account, so that the fan-out of its posts must read
   * who (feeds/fanOutFilters.ts): set before the first such record is written, never unset; absent
   * for accounts from before the field, learnt on their first post.
   */
  fanOutFilters?: boolean;
  lastStatusAt: Date | null;
  suspendedAt: Date | null;
  silencedAt: Date | null;
  /** Moderators force its media sensitive (Mastodon's sensitized_at). */
  sensitizedAt?: Date | null;
  /** Who suspended it: this instance's moderators, or its own server (a remote Delete). */
  suspensionOrigin?: 'local' | 'remote' | null;
  /** When the data of a suspended account was deleted (by an administrator, or 30 days on). */
  dataDeletedAt?: Date | null;
  memorial: boolean;
  /**
   * Local accounts whose user is unconfirmed or awaiting approval: hidden from the REST API except
   * lookup (filter with `visibleAccountFilter`). Kept on the account so reads need no join.
   */
  pendingUser: boolean;
  movedToAccountId: Id | null;
  /** Former actor ids (ActivityPub `alsoKnownAs`): remote actors as published; local aliases. */
  alsoKnownAs?: string[];
  /** Remote accounts: ActivityPub details read from the actor document (activitypub/actors.ts). */
  followingUrl?: string | null;
  featuredTagsUrl?: string | null;
  /** Remote accounts: the actor's `featuredCollections` (Mastodon 4.6 collections). */
  featuredCollectionsUrl?: string | null;
  /** Remote accounts: id of the public key (keyId of its signatures). */
  keyId?: string | null;
  /** Remote accounts: custom emojis used in name, bio and fields. */
  emojis?: Array<{ shortcode: string; url: string }>;
  /** Remote accounts: when the actor document was last fetched or received. */
  lastFetchedAt?: Date | null;
  lastWebfingeredAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Query fragment that leaves out accounts of unconfirmed or unapproved users. */
type ProfileContent =
  'displayName' | 'displayNameLower' | 'note' | 'noteSource' | 'fields' | 'fieldsSource' | 'avatar' | 'header';

/** A profile with nothing in it: a new account's, and what a removal of the account's data leaves. */
export function blankProfile(): Pick<AccountDoc, ProfileContent> {
  return {
    displayName: '',
    displayNameLower: '',
    note: '',
    noteSource: '',
    fields: [],
    fieldsSource: [],
    avatar: null,
    header: null,
  };
}

export const visibleAccountFilter = { pendingUser: { $ne: true } } as const;

export const accounts = defineCollection<AccountDoc>(
  'accounts',
  [
    { key: { usernameLower: 1, domain: 1 }, name: 'username_domain', unique: true },
    { key: { uri: 1 }, name: 'uri', unique: true },
    { key: { keyId: 1 }, name: 'key_id' },
    { key: { displayNameLower: 1 }, name: 'display_name' },
    { key: { discoverable: 1, lastStatusAt: -1 }, name: 'directory_active' },
    { key: { discoverable: 1, _id: -1 }, name: 'directory_new' },
    { key: { followersCount: -1 }, name: 'popular' },
  ],
  { cachedById: true },
);

/** An account as the hot read paths see it (cached in Redis): everything but its private key. */
// Read on every authenticated request and page: the same bytes are parsed once (docCache.ts; frozen copies).
export const accountView = defineDocView(accounts, 'a', ['privateKeyPem', 'countMarks'], { shareParsed: true });
export type CachedAccount = Omit<AccountDoc, 'privateKeyPem' | 'countMarks'>;
