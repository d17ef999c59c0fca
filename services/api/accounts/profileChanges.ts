// The profile changes a client asks for, as PATCH /api/v1/accounts/update_credentials and PATCH
// /api/v1/profile (Mastodon 4.6) take them: the same parameters, Rails-style booleans and
// `fields_attributes` as a list or a hash.
import { Type, type Static } from '@sinclair/typebox';
import type { ProfileChanges } from '../../core/accounts/profile.ts';
import { normaliseAttributionDomains } from '../../core/accounts/profile.ts';
import type { Upload } from '../plugins/params.ts';
import { BoolLike, FieldsAttributes, fieldList, railsBoolean } from './params.ts';

const NullableText = Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]);

export const UpdateBody = Type.Object(
  {
    display_name: Type.Optional(NullableText),
    note: Type.Optional(NullableText),
    avatar_description: Type.Optional(NullableText),
    header_description: Type.Optional(NullableText),
    locked: Type.Optional(BoolLike),
    bot: Type.Optional(BoolLike),
    discoverable: Type.Optional(BoolLike),
    indexable: Type.Optional(BoolLike),
    hide_collections: Type.Optional(BoolLike),
    show_media: Type.Optional(BoolLike),
    show_media_replies: Type.Optional(BoolLike),
    show_featured: Type.Optional(BoolLike),
    attribution_domains: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 300 }), { maxItems: 1000 }), Type.String({ maxLength: 300 })]),
    ),
    // A value that is neither a list nor a hash (a client library sends the string `undefined`
    // when unset) is ignored, as Rails' strong parameters drop it in Mastodon.
    fields_attributes: Type.Optional(
      Type.Union([FieldsAttributes, Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean(), Type.Null()]),
    ),
    // An empty `source` (e.g. `source=` in a form) is accepted and changes nothing.
    source: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 0 }),
        Type.Null(),
        Type.Object(
          {
            privacy: Type.Optional(Type.String({ maxLength: 20 })),
            sensitive: Type.Optional(BoolLike),
            language: Type.Optional(Type.Union([Type.String({ maxLength: 10 }), Type.Null()])),
            quote_policy: Type.Optional(Type.String({ maxLength: 20 })),
          },
          { additionalProperties: true },
        ),
      ]),
    ),
  },
  { additionalProperties: true },
);

export function profileChangesOf(
  body: Static<typeof UpdateBody>,
  uploads: Record<string, Upload> | null,
): ProfileChanges {
  const source = body.source && typeof body.source === 'object' ? body.source : {};
  return {
    displayName: body.display_name ?? undefined,
    note: body.note ?? undefined,
    locked: railsBoolean(body.locked),
    bot: railsBoolean(body.bot),
    discoverable: railsBoolean(body.discoverable),
    indexable: railsBoolean(body.indexable),
    hideCollections: railsBoolean(body.hide_collections),
    showMedia: railsBoolean(body.show_media),
    showMediaReplies: railsBoolean(body.show_media_replies),
    showFeatured: railsBoolean(body.show_featured),
    attributionDomains:
      body.attribution_domains === undefined
        ? undefined
        : normaliseAttributionDomains([body.attribution_domains].flat()),
    fields:
      body.fields_attributes && typeof body.fields_attributes === 'object'
        ? fieldList(body.fields_attributes)
        : undefined,
    avatar: uploads?.avatar?.data,
    header: uploads?.header?.data,
    avatarDescription: body.avatar_description ?? undefined,
    headerDescription: body.header_description ?? undefined,
    privacy: source.privacy || undefined,
    sensitive: railsBoolean(source.sensitive),
    language: source.language === undefined ? undefined : source.language,
    quotePolicy: source.quote_policy || undefined,
  };
}
