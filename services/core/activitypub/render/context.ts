// The JSON-LD @context values we emit, in Mastodon's shape (federation reference §2): the AS2 URL,
// security/v1 where keys appear, then one object defining every extension term the document uses.
// Consumers that do real JSON-LD processing (Fedify) drop undefined terms, so each term we emit is
// defined here.
import { AS_CONTEXT } from '../json.ts';

export { AS_CONTEXT };
export const SECURITY_CONTEXT = 'https://w3id.org/security/v1';

/** GoToSocial's interaction policy terms, which Mastodon uses for canQuote and canFeature. */
const INTERACTION_POLICY_TERMS = {
  gts: 'https://gotosocial.org/ns#',
  interactionPolicy: { '@id': 'gts:interactionPolicy', '@type': '@id' },
  automaticApproval: { '@id': 'gts:automaticApproval', '@type': '@id' },
  manualApproval: { '@id': 'gts:manualApproval', '@type': '@id' },
} as const;

const ACTOR_TERMS = {
  manuallyApprovesFollowers: 'as:manuallyApprovesFollowers',
  toot: 'http://joinmastodon.org/ns#',
  featured: { '@id': 'toot:featured', '@type': '@id' },
  featuredTags: { '@id': 'toot:featuredTags', '@type': '@id' },
  attributionDomains: { '@id': 'toot:attributionDomains', '@type': '@id' },
  alsoKnownAs: { '@id': 'as:alsoKnownAs', '@type': '@id' },
  movedTo: { '@id': 'as:movedTo', '@type': '@id' },
  schema: 'http://schema.org#',
  PropertyValue: 'schema:PropertyValue',
  value: 'schema:value',
  discoverable: 'toot:discoverable',
  suspended: 'toot:suspended',
  memorial: 'toot:memorial',
  indexable: 'toot:indexable',
  Emoji: 'toot:Emoji',
  Hashtag: 'as:Hashtag',
  focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' },
  // Collections (Mastodon 4.6, FEP-7aa9) and the interaction policy that names who may feature.
  featuredCollections: { '@id': 'https://w3id.org/fep/7aa9#featuredCollections', '@type': '@id' },
  ...INTERACTION_POLICY_TERMS,
  canFeature: { '@id': 'https://w3id.org/fep/7aa9#canFeature', '@type': '@id' },
} as const;

const NOTE_TERMS = {
  ostatus: 'http://ostatus.org#',
  atomUri: 'ostatus:atomUri',
  inReplyToAtomUri: 'ostatus:inReplyToAtomUri',
  conversation: 'ostatus:conversation',
  sensitive: 'as:sensitive',
  toot: 'http://joinmastodon.org/ns#',
  votersCount: 'toot:votersCount',
  blurhash: 'toot:blurhash',
  focalPoint: { '@container': '@list', '@id': 'toot:focalPoint' },
  Hashtag: 'as:Hashtag',
  Emoji: 'toot:Emoji',
  // Quote posts (FEP-044f, as Mastodon 4.5 defines them).
  quote: { '@id': 'https://w3id.org/fep/044f#quote', '@type': '@id' },
  quoteUri: 'http://fedibird.com/ns#quoteUri',
  _misskey_quote: 'https://misskey-hub.net/ns#_misskey_quote',
  quoteAuthorization: { '@id': 'https://w3id.org/fep/044f#quoteAuthorization', '@type': '@id' },
  ...INTERACTION_POLICY_TERMS,
  canQuote: { '@id': 'gts:canQuote', '@type': '@id' },
} as const;

/** The terms of an approval stamp (QuoteAuthorization, FeatureAuthorization), GoToSocial's. */
const STAMP_TERMS = {
  gts: 'https://gotosocial.org/ns#',
  interactingObject: { '@id': 'gts:interactingObject', '@type': '@id' },
  interactionTarget: { '@id': 'gts:interactionTarget', '@type': '@id' },
} as const;

/** QuoteAuthorization stamps, QuoteRequest and their Accept/Reject (FEP-044f). */
export const QUOTE_CONTEXT = [
  AS_CONTEXT,
  {
    QuoteAuthorization: 'https://w3id.org/fep/044f#QuoteAuthorization',
    QuoteRequest: 'https://w3id.org/fep/044f#QuoteRequest',
    ...STAMP_TERMS,
    quote: { '@id': 'https://w3id.org/fep/044f#quote', '@type': '@id' },
  },
] as const;

/** FeaturedCollection documents, their items, FeatureRequest / FeatureAuthorization and the activities carrying them. */
export const COLLECTION_CONTEXT = [
  AS_CONTEXT,
  {
    toot: 'http://joinmastodon.org/ns#',
    sensitive: 'as:sensitive',
    discoverable: 'toot:discoverable',
    Hashtag: 'as:Hashtag',
    FeaturedCollection: 'https://w3id.org/fep/7aa9#FeaturedCollection',
    FeaturedItem: 'https://w3id.org/fep/7aa9#FeaturedItem',
    FeatureRequest: 'https://w3id.org/fep/7aa9#FeatureRequest',
    FeatureAuthorization: 'https://w3id.org/fep/7aa9#FeatureAuthorization',
    topic: { '@id': 'https://w3id.org/fep/7aa9#topic', '@type': '@id' },
    featuredObject: { '@id': 'https://w3id.org/fep/7aa9#featuredObject', '@type': '@id' },
    featuredObjectType: { '@id': 'https://w3id.org/fep/7aa9#featuredObjectType', '@type': '@vocab' },
    featureAuthorization: { '@id': 'https://w3id.org/fep/7aa9#featureAuthorization', '@type': '@id' },
    ...STAMP_TERMS,
  },
] as const;

/** Actors, Update{Person}, Delete{actor}. */
export const ACTOR_CONTEXT = [AS_CONTEXT, SECURITY_CONTEXT, ACTOR_TERMS] as const;
/** Notes, Questions and the activities that embed them. */
export const NOTE_CONTEXT = [AS_CONTEXT, NOTE_TERMS] as const;
/** Hashtag collections and Add/Remove of a featured tag. */
export const HASHTAG_CONTEXT = [AS_CONTEXT, { Hashtag: 'as:Hashtag' }] as const;

export type JsonLd = Record<string, unknown>;

/** The document with its @context first. */
export function withContext(context: unknown, doc: JsonLd): JsonLd {
  return { '@context': context, ...doc };
}
