// Instance (v2) and V1::Instance entities: the capability documents clients read first.
import type { FeedAccessPair, FeedKind } from '../settings/feedAccess.ts';
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import { INSTANCE_VERSION, LIMITS, MASTODON_API_LEVEL } from '../instance/limits.ts';
import type { InstanceStats } from '../instance/stats.ts';
import type { RuleDoc } from '../model/rules.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);
/** An embedded Account entity (rendered by the accounts presenter). */
const AnyAccount = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]);

export const RuleEntity = Type.Object({
  id: Type.String(),
  text: Type.String(),
  hint: Type.String(),
  translations: Type.Record(Type.String(), Type.Object({ text: Type.String(), hint: Type.String() })),
});
export type RuleEntity = Static<typeof RuleEntity>;
const Rule = RuleEntity;

const FeedAccessEntity = Type.Object({ local: Type.String(), remote: Type.String() });

const Configuration = Type.Object({
  /** Mastodon 4.5: who may read the live (public), hashtag and trending-link feeds. */
  timelines_access: Type.Optional(
    Type.Object({
      live_feeds: FeedAccessEntity,
      hashtag_feeds: FeedAccessEntity,
      trending_link_feeds: FeedAccessEntity,
    }),
  ),
  urls: Type.Object({
    streaming: Type.String(),
    status: NullableString,
    about: Type.String(),
    privacy_policy: NullableString,
    terms_of_service: NullableString,
  }),
  vapid: Type.Object({ public_key: Type.String() }),
  accounts: Type.Object({ max_featured_tags: Type.Integer(), max_pinned_statuses: Type.Integer() }),
  statuses: Type.Object({
    max_characters: Type.Integer(),
    max_media_attachments: Type.Integer(),
    characters_reserved_per_url: Type.Integer(),
  }),
  media_attachments: Type.Object({
    supported_mime_types: Type.Array(Type.String()),
    description_limit: Type.Integer(),
    image_size_limit: Type.Integer(),
    image_matrix_limit: Type.Integer(),
    video_size_limit: Type.Integer(),
    video_frame_rate_limit: Type.Integer(),
    video_matrix_limit: Type.Integer(),
  }),
  polls: Type.Object({
    max_options: Type.Integer(),
    max_characters_per_option: Type.Integer(),
    min_expiration: Type.Integer(),
    max_expiration: Type.Integer(),
  }),
  translation: Type.Object({ enabled: Type.Boolean() }),
  limited_federation: Type.Boolean(),
});

export const InstanceEntity = Type.Object({
  domain: Type.String(),
  title: Type.String(),
  version: Type.String(),
  source_url: Type.String(),
  description: Type.String(),
  usage: Type.Object({ users: Type.Object({ active_month: Type.Integer() }) }),
  thumbnail: Type.Object({
    url: Type.String(),
    blurhash: Type.Optional(Type.String()),
    versions: Type.Optional(Type.Object({ '@1x': Type.String(), '@2x': Type.String() })),
  }),
  icon: Type.Array(Type.Object({ src: Type.String(), size: Type.String() })),
  languages: Type.Array(Type.String()),
  configuration: Configuration,
  registrations: Type.Object({
    enabled: Type.Boolean(),
    approval_required: Type.Boolean(),
    message: NullableString,
    url: NullableString,
    min_age: Type.Union([Type.Integer(), Type.Null()]),
    reason_required: Type.Union([Type.Boolean(), Type.Null()]),
  }),
  api_versions: Type.Object({ mastodon: Type.Integer() }),
  contact: Type.Object({ email: Type.String(), account: AnyAccount }),
  rules: Type.Array(Rule),
});
export type InstanceEntity = Static<typeof InstanceEntity>;

export const InstanceV1Entity = Type.Object({
  uri: Type.String(),
  title: Type.String(),
  short_description: Type.String(),
  description: Type.String(),
  email: Type.String(),
  version: Type.String(),
  urls: Type.Object({ streaming_api: Type.String() }),
  stats: Type.Object({ user_count: Type.Integer(), status_count: Type.Integer(), domain_count: Type.Integer() }),
  thumbnail: NullableString,
  languages: Type.Array(Type.String()),
  registrations: Type.Boolean(),
  approval_required: Type.Boolean(),
  invites_enabled: Type.Boolean(),
  configuration: Type.Object({
    accounts: Configuration.properties.accounts,
    statuses: Configuration.properties.statuses,
    media_attachments: Type.Omit(Configuration.properties.media_attachments, ['description_limit']),
    polls: Configuration.properties.polls,
  }),
  contact_account: AnyAccount,
  rules: Type.Array(Rule),
});
export type InstanceV1Entity = Static<typeof InstanceV1Entity>;

/** What the presenters need beyond configuration: settings and live numbers. */
export interface InstanceFacts {
  title: string;
  description: string;
  contactEmail: string;
  contactAccount: Record<string, unknown> | null;
  registrations: { enabled: boolean; approvalRequired: boolean; message: string | null };
  stats: InstanceStats;
  rules: RuleEntity[];
  /** Uploaded thumbnail (URL, blurhash, 1x/2x versions), or null for the default image. */
  thumbnail: { url: string; blurhash?: string; versions?: { '@1x': string; '@2x': string } } | null;
  termsOfService: boolean;
  icon: { src: string; size: string }[];
  /** The feed access settings (services/core/settings/feedAccess.ts), when known. */
  feedAccess?: Record<FeedKind, FeedAccessPair>;
}

export function presentRule(rule: RuleDoc): RuleEntity {
  return { id: String(rule._id), text: rule.text, hint: rule.hint, translations: {} };
}

/**
 * Where clients open the streaming API: STREAMING_API_BASE_URL, else this host over ws(s) (a proxy
 * routes /api/v1/streaming to the streaming role). On a laptop (`localhost`) there is no proxy, so
 * clients go straight to the streaming port.
 */
export function streamingBaseUrl(core: Core): string {
  const { config } = core;
  if (config.streamingApiBaseUrl) return config.streamingApiBaseUrl;
  const scheme = config.localHttps ? 'wss' : 'ws';
  const local = /^(localhost|127\.0\.0\.1)(:\d+)?$/.exec(config.webDomain);
  return local ? `${scheme}://${local[1]}:${config.streamingPort}` : `${scheme}://${config.webDomain}`;
}

function configuration(core: Core, facts: InstanceFacts): Static<typeof Configuration> {
  const { config } = core;
  const m = LIMITS.mediaAttachments;
  return {
    urls: {
      streaming: streamingBaseUrl(core),
      status: null,
      about: `${config.baseUrl}/about`,
      privacy_policy: `${config.baseUrl}/privacy-policy`,
      terms_of_service: facts.termsOfService ? `${config.baseUrl}/terms-of-service` : null,
    },
    vapid: { public_key: core.vapid.publicKey },
    accounts: {
      max_featured_tags: LIMITS.accounts.maxFeaturedTags,
      max_pinned_statuses: LIMITS.accounts.maxPinnedStatuses,
    },
    statuses: {
      max_characters: LIMITS.statuses.maxCharacters,
      max_media_attachments: LIMITS.statuses.maxMediaAttachments,
      characters_reserved_per_url: LIMITS.statuses.charactersReservedPerUrl,
    },
    media_attachments: {
      supported_mime_types: [...m.supportedMimeTypes],
      description_limit: m.descriptionLimit,
      image_size_limit: m.imageSizeLimit,
      image_matrix_limit: m.imageMatrixLimit,
      video_size_limit: m.videoSizeLimit,
      video_frame_rate_limit: m.videoFrameRateLimit,
      video_matrix_limit: m.videoMatrixLimit,
    },
    polls: {
      max_options: LIMITS.polls.maxOptions,
      max_characters_per_option: LIMITS.polls.maxCharactersPerOption,
      min_expiration: LIMITS.polls.minExpiration,
      max_expiration: LIMITS.polls.maxExpiration,
    },
    translation: { enabled: config.translation !== null },
    limited_federation: config.limitedFederationMode,
  };
}

function defaultThumbnailUrl(core: Core): string {
  return `${core.config.baseUrl}/packs/media/images/preview.png`;
}

export function presentInstance(core: Core, facts: InstanceFacts): InstanceEntity {
  const { config } = core;
  return {
    domain: config.localDomain,
    title: facts.title,
    version: INSTANCE_VERSION,
    source_url: `${config.baseUrl}/source`,
    description: facts.description,
    // As Mastodon: a limited-federation server does not reveal its activity.
    usage: { users: { active_month: config.limitedFederationMode ? 0 : facts.stats.activeMonth } },
    thumbnail: facts.thumbnail ?? { url: defaultThumbnailUrl(core) },
    icon: facts.icon,
    languages: ['en'],
    configuration: {
      ...configuration(core, facts),
      ...(facts.feedAccess
        ? {
            timelines_access: {
              live_feeds: facts.feedAccess.live,
              hashtag_feeds: facts.feedAccess.topic,
              trending_link_feeds: facts.feedAccess.topic,
            },
          }
        : {}),
    },
    registrations: {
      enabled: facts.registrations.enabled,
      approval_required: facts.registrations.approvalRequired,
      message: facts.registrations.enabled ? null : facts.registrations.message,
      url: null,
      min_age: null,
      reason_required: facts.registrations.approvalRequired,
    },
    api_versions: { mastodon: MASTODON_API_LEVEL },
    contact: { email: facts.contactEmail, account: facts.contactAccount },
    rules: facts.rules,
  };
}

export function presentInstanceV1(core: Core, facts: InstanceFacts): InstanceV1Entity {
  const v2 = configuration(core, facts);
  const { description_limit: _descriptionLimit, ...media } = v2.media_attachments;
  return {
    uri: core.config.localDomain,
    title: facts.title,
    short_description: facts.description,
    description: '',
    email: facts.contactEmail,
    version: INSTANCE_VERSION,
    urls: { streaming_api: streamingBaseUrl(core) },
    stats: {
      user_count: facts.stats.userCount,
      status_count: facts.stats.statusCount,
      domain_count: facts.stats.domainCount,
    },
    thumbnail: facts.thumbnail?.url ?? defaultThumbnailUrl(core),
    languages: ['en'],
    registrations: facts.registrations.enabled,
    approval_required: facts.registrations.approvalRequired,
    invites_enabled: false,
    configuration: { accounts: v2.accounts, statuses: v2.statuses, media_attachments: media, polls: v2.polls },
    contact_account: facts.contactAccount,
    rules: facts.rules,
  };
}
