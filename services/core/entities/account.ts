// Account and CredentialAccount entities (mastodon-api-entities.md §1, §2) and their presenters.
// The schemas are complete on purpose: Fastify's serializer drops whatever a schema leaves out.
import { Type, type Static } from '@sinclair/typebox';
import { profileImageUrls } from '../media/remoteProfileImages.ts';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc, CachedAccount } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { EVERYONE_ROLE, roleOfUser, type EffectiveRole } from '../roles/roles.ts';
import { emojisInTexts } from '../emojis/emojis.ts';
import { featurePolicyKeys } from '../featuredCollections/featurePolicy.ts';
import { withViewerFeatureApproval } from './accountViewer.ts';
import type { Id } from '../ids.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const FieldEntity = Type.Object({
  name: Type.String(),
  value: Type.String(),
  verified_at: NullableString,
});

export const CustomEmojiEntity = Type.Object({
  shortcode: Type.String(),
  url: Type.String(),
  static_url: Type.String(),
  visible_in_picker: Type.Boolean(),
  category: Type.Optional(NullableString),
});

export const AccountRoleEntity = Type.Object({ id: Type.String(), name: Type.String(), color: Type.String() });

export const RoleEntity = Type.Object({
  id: Type.String(),
  name: Type.String(),
  color: Type.String(),
  permissions: Type.String(),
  highlighted: Type.Boolean(),
});
export type RoleEntityType = Static<typeof RoleEntity>;

const PolicyKeys = Type.Array(Type.String());
export const FeatureApprovalEntity = Type.Object({
  automatic: PolicyKeys,
  manual: PolicyKeys,
  current_user: Type.String(),
});

const accountProperties = {
  id: Type.String(),
  username: Type.String(),
  acct: Type.String(),
  url: NullableString,
  uri: Type.String(),
  display_name: Type.String(),
  note: Type.String(),
  avatar: Type.String(),
  avatar_static: Type.String(),
  header: Type.String(),
  header_static: Type.String(),
  /** Alt text of the avatar and header (Mastodon 4.6); "" when none. */
  avatar_description: Type.String(),
  header_description: Type.String(),
  locked: Type.Boolean(),
  fields: Type.Array(FieldEntity),
  emojis: Type.Array(CustomEmojiEntity),
  bot: Type.Boolean(),
  group: Type.Boolean(),
  discoverable: Type.Union([Type.Boolean(), Type.Null()]),
  indexable: Type.Boolean(),
  noindex: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  hide_collections: Type.Union([Type.Boolean(), Type.Null()]),
  /** The Account this one moved to (an Account entity), only when moved. */
  moved: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  suspended: Type.Optional(Type.Boolean()),
  limited: Type.Optional(Type.Boolean()),
  memorial: Type.Optional(Type.Boolean()),
  created_at: Type.String(),
  last_status_at: NullableString,
  statuses_count: Type.Integer(),
  followers_count: Type.Integer(),
  following_count: Type.Integer(),
  roles: Type.Optional(Type.Array(AccountRoleEntity)),
  /** Mastodon 4.6: who may feature the account in a collection; `current_user` is per viewer. */
  feature_approval: FeatureApprovalEntity,
  /** Mastodon 4.6 profile tabs. */
  show_media: Type.Boolean(),
  show_media_replies: Type.Boolean(),
  show_featured: Type.Boolean(),
};

export const AccountEntity = Type.Object(accountProperties);
export type Account = Static<typeof AccountEntity>;

export const CredentialAccountEntity = Type.Object({
  ...accountProperties,
  source: Type.Object({
    note: Type.String(),
    fields: Type.Array(FieldEntity),
    privacy: Type.String(),
    sensitive: Type.Boolean(),
    language: Type.String(),
    quote_policy: Type.String(),
    follow_requests_count: Type.Integer(),
    hide_collections: Type.Union([Type.Boolean(), Type.Null()]),
    discoverable: Type.Union([Type.Boolean(), Type.Null()]),
    indexable: Type.Boolean(),
    attribution_domains: Type.Array(Type.String()),
  }),
  role: RoleEntity,
});
export type CredentialAccount = Static<typeof CredentialAccountEntity>;

/** Placeholder images served by the API (see services/api/accounts/placeholders.ts). */
export const MISSING_AVATAR_PATH = '/avatars/original/missing.png';
export const MISSING_HEADER_PATH = '/headers/original/missing.png';

/** `created_at` as Mastodon renders it: the creation day at midnight UTC. */
export function midnightUtc(date: Date): string {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  return d.toISOString();
}

export function dateOnly(date: Date | null): string | null {
  return date ? date.toISOString().slice(0, 10) : null;
}

export function acctOf(doc: Pick<AccountDoc, 'username' | 'domain'>): string {
  return doc.domain ? `${doc.username}@${doc.domain}` : doc.username;
}

export function roleBadges(role: EffectiveRole): Static<typeof AccountRoleEntity>[] {
  return role.highlighted && role.id !== EVERYONE_ROLE.id ? [{ id: role.id, name: role.name, color: role.color }] : [];
}

export function presentRole(role: EffectiveRole): RoleEntityType {
  return {
    id: role.id,
    name: role.name,
    color: role.color,
    permissions: String(role.permissions),
    highlighted: role.highlighted,
  };
}

/** Renders the Account entity. `role` is the user's role for local accounts (looked up when omitted). */
export async function presentAccount(
  core: Core,
  doc: CachedAccount,
  opts: { role?: EffectiveRole; moved?: CachedAccount | null } = {},
): Promise<Account> {
  const [avatar, avatarStatic] = profileImageUrls(core, doc, 'avatar', MISSING_AVATAR_PATH);
  const [header, headerStatic] = profileImageUrls(core, doc, 'header', MISSING_HEADER_PATH);
  const suspended = doc.suspendedAt !== null;
  const base: Account = {
    id: String(doc._id),
    username: doc.username,
    acct: acctOf(doc),
    url: doc.url,
    uri: doc.uri,
    display_name: suspended ? '' : doc.displayName,
    note: suspended ? '' : doc.note,
    avatar: suspended ? `${core.config.baseUrl}${MISSING_AVATAR_PATH}` : avatar,
    avatar_static: suspended ? `${core.config.baseUrl}${MISSING_AVATAR_PATH}` : avatarStatic,
    header: suspended ? `${core.config.baseUrl}${MISSING_HEADER_PATH}` : header,
    header_static: suspended ? `${core.config.baseUrl}${MISSING_HEADER_PATH}` : headerStatic,
    avatar_description: suspended ? '' : (doc.avatarDescription ?? ''),
    header_description: suspended ? '' : (doc.headerDescription ?? ''),
    locked: suspended ? false : doc.locked,
    fields: suspended
      ? []
      : doc.fields.map((f) => ({
          name: f.name,
          value: f.value,
          verified_at: f.verifiedAt ? f.verifiedAt.toISOString() : null,
        })),
    emojis: suspended
      ? []
      : await emojisInTexts(
          core,
          [doc.displayName, doc.note, ...doc.fields.flatMap((f) => [f.name, f.value])],
          doc.domain,
        ),
    bot: suspended ? false : doc.bot,
    group: doc.group,
    discoverable: suspended ? false : doc.discoverable,
    indexable: doc.indexable,
    hide_collections: doc.hideCollections,
    created_at: midnightUtc(doc.createdAt),
    last_status_at: dateOnly(doc.lastStatusAt),
    statuses_count: doc.statusesCount,
    followers_count: doc.followersCount,
    following_count: doc.followingCount,
    // Rendered for no viewer (Mastodon: `denied`); withViewerFeatureApproval lays the viewer's over.
    feature_approval: {
      automatic: suspended ? [] : featurePolicyKeys(doc, 'automatic'),
      manual: suspended ? [] : featurePolicyKeys(doc, 'manual'),
      current_user: 'denied',
    },
    show_media: doc.showMedia ?? true,
    show_media_replies: doc.showMediaReplies ?? true,
    show_featured: doc.showFeatured ?? true,
  };
  if (suspended) base.suspended = true;
  if (doc.silencedAt) base.limited = true;
  if (doc.memorial) base.memorial = true;
  if (doc.domain === null) {
    base.noindex = doc.noindex === true;
    const role = opts.role ?? (await localRole(core, doc));
    base.roles = roleBadges(role);
  }
  if (!suspended && opts.moved) base.moved = await presentAccount(core, opts.moved);
  return base;
}

/**
 * Renders many accounts, looking the users of local ones up in one query (roles are cached); with
 * `viewerId`, `feature_approval.current_user` is the viewer's (accountViewer.ts).
 */
export async function presentAccounts(
  core: Core,
  docs: CachedAccount[],
  opts: { viewerId?: Id | null } = {},
): Promise<Account[]> {
  const localIds = docs.filter((d) => d.domain === null).map((d) => d._id);
  const roleByAccount = new Map<string, EffectiveRole>();
  if (localIds.length > 0) {
    const us = await collection(core.db, users)
      .find({ accountId: { $in: localIds } }, { projection: { accountId: 1, roleId: 1 } })
      .toArray();
    for (const u of us) roleByAccount.set(String(u.accountId), await roleOfUser(core, u));
  }
  const rendered = await Promise.all(
    docs.map((d) => presentAccount(core, d, { role: roleByAccount.get(String(d._id)) ?? EVERYONE_ROLE })),
  );
  return opts.viewerId ? withViewerFeatureApproval(core, rendered, opts.viewerId) : rendered;
}

async function localRole(core: Core, doc: CachedAccount): Promise<EffectiveRole> {
  const user = await collection(core.db, users).findOne({ accountId: doc._id }, { projection: { roleId: 1 } });
  return user ? roleOfUser(core, user) : EVERYONE_ROLE;
}

/** Renders the CredentialAccount (own account: source and role). */
export async function presentCredentialAccount(
  core: Core,
  doc: AccountDoc,
  user: UserDoc,
  opts: { followRequestsCount?: number } = {},
): Promise<CredentialAccount> {
  const role = await roleOfUser(core, user);
  const account = await presentAccount(core, doc, { role });
  return {
    ...account,
    source: {
      note: doc.noteSource,
      fields: doc.fieldsSource.map((f, i) => ({
        name: f.name,
        value: f.value,
        verified_at: doc.fields[i]?.verifiedAt ? (doc.fields[i].verifiedAt as Date).toISOString() : null,
      })),
      privacy: user.settings.defaultPrivacy,
      sensitive: user.settings.defaultSensitive,
      language: user.settings.defaultLanguage ?? '',
      quote_policy: user.settings.defaultQuotePolicy ?? 'public',
      follow_requests_count: opts.followRequestsCount ?? 0,
      hide_collections: doc.hideCollections,
      discoverable: doc.discoverable,
      indexable: doc.indexable,
      attribution_domains: doc.attributionDomains ?? [],
    },
    role: presentRole(role),
  };
}

/** Mastodon's PartialAccountWithAvatar: enough of an account to draw its avatar. */
export function presentPartialAccount(a: Account) {
  return {
    id: a.id,
    acct: a.acct,
    url: a.url,
    avatar: a.avatar,
    avatar_static: a.avatar_static,
    locked: a.locked,
    bot: a.bot,
  };
}
