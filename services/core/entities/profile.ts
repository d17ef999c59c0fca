// Profile (Mastodon 4.6, GET/PATCH /api/v1/profile): the signed-in user's own profile with the
// editable values as they were written (note and fields as plain text), images null when unset,
// and the profile-tab settings.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { storageFor } from '../media/storage.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const ProfileEntity = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  note: Type.String(),
  fields: Type.Array(Type.Object({ name: Type.String(), value: Type.String(), verified_at: Nullable(Type.String()) })),
  avatar: Nullable(Type.String()),
  avatar_static: Nullable(Type.String()),
  avatar_description: Type.String(),
  header: Nullable(Type.String()),
  header_static: Nullable(Type.String()),
  header_description: Type.String(),
  locked: Type.Boolean(),
  bot: Type.Boolean(),
  hide_collections: Type.Union([Type.Boolean(), Type.Null()]),
  discoverable: Type.Union([Type.Boolean(), Type.Null()]),
  indexable: Type.Boolean(),
  show_media: Type.Boolean(),
  show_media_replies: Type.Boolean(),
  show_featured: Type.Boolean(),
  attribution_domains: Type.Array(Type.String()),
});
export type Profile = Static<typeof ProfileEntity>;

export function presentProfile(core: Core, doc: AccountDoc): Profile {
  const storage = storageFor(core);
  const image = (kind: 'avatar' | 'header') => {
    const stored = doc[kind];
    return stored ? [storage.url(stored.path), storage.url(stored.staticPath)] : [null, null];
  };
  const [avatar, avatarStatic] = image('avatar');
  const [header, headerStatic] = image('header');
  // The stored fields carry the verification; their sources the text as written.
  const fields = doc.fieldsSource.map((f, i) => ({
    name: f.name,
    value: f.value,
    verified_at: doc.fields[i]?.verifiedAt?.toISOString() ?? null,
  }));
  return {
    id: String(doc._id),
    display_name: doc.displayName,
    note: doc.noteSource,
    fields,
    avatar,
    avatar_static: avatarStatic,
    avatar_description: doc.avatarDescription ?? '',
    header,
    header_static: headerStatic,
    header_description: doc.headerDescription ?? '',
    locked: doc.locked,
    bot: doc.bot,
    hide_collections: doc.hideCollections,
    discoverable: doc.discoverable,
    indexable: doc.indexable,
    show_media: doc.showMedia ?? true,
    show_media_replies: doc.showMediaReplies ?? true,
    show_featured: doc.showFeatured ?? true,
    attribution_domains: doc.attributionDomains ?? [],
  };
}
