// ScheduledStatus entity (entities reference §28): the stored creation params in Mastodon's shape.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { ScheduledStatusDoc } from '../model/scheduledStatuses.ts';
import { loadAttachments } from '../media/statusAttachments.ts';
import { MediaAttachmentEntity, presentMediaAttachment } from './mediaAttachment.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ScheduledStatusEntity = Type.Object({
  id: Type.String(),
  scheduled_at: Type.String(),
  params: Type.Object({
    text: Type.String(),
    poll: Type.Union([
      Type.Object({
        options: Type.Array(Type.String()),
        expires_in: Type.String(),
        multiple: Type.Boolean(),
        hide_totals: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    media_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
    sensitive: Type.Union([Type.Boolean(), Type.Null()]),
    spoiler_text: NullableString,
    visibility: Type.String(),
    in_reply_to_id: NullableString,
    language: NullableString,
    application_id: Type.Union([Type.Integer(), Type.Null()]),
    scheduled_at: Type.Null(),
    idempotency: NullableString,
    with_rate_limit: Type.Boolean(),
    quoted_status_id: NullableString,
    quote_approval_policy: NullableString,
  }),
  media_attachments: Type.Array(MediaAttachmentEntity),
});
export type ScheduledStatusEntity = Static<typeof ScheduledStatusEntity>;

export async function presentScheduledStatus(core: Core, doc: ScheduledStatusDoc): Promise<ScheduledStatusEntity> {
  const p = doc.params;
  const media = await loadAttachments(core, p.mediaIds);
  return {
    id: String(doc._id),
    scheduled_at: doc.scheduledAt.toISOString(),
    params: {
      text: p.text,
      poll: p.poll
        ? {
            options: p.poll.options,
            expires_in: String(p.poll.expiresIn),
            multiple: p.poll.multiple,
            hide_totals: p.poll.hideTotals,
          }
        : null,
      media_ids: p.mediaIds.length > 0 ? p.mediaIds.map(String) : null,
      sensitive: p.sensitive,
      spoiler_text: p.spoilerText === '' ? null : p.spoilerText,
      visibility: p.visibility,
      in_reply_to_id: p.inReplyToId === null ? null : String(p.inReplyToId),
      language: p.language,
      application_id: doc.applicationId === null ? null : Number(doc.applicationId),
      scheduled_at: null,
      idempotency: doc.idempotencyKey,
      with_rate_limit: false,
      quoted_status_id: p.quotedStatusId ? String(p.quotedStatusId) : null,
      quote_approval_policy: p.quotePolicy ?? null,
    },
    media_attachments: media.map((m) => presentMediaAttachment(core, m)),
  };
}
