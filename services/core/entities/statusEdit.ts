// StatusEdit (GET /api/v1/statuses/:id/history), oldest first.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { StatusEditDoc } from '../model/statusEdits.ts';
import { loadAttachments } from '../media/statusAttachments.ts';
import { AccountEntity, CustomEmojiEntity, presentAccount } from './account.ts';
import { emojisInTexts } from '../../core/emojis/emojis.ts';
import { MediaAttachmentEntity, presentMediaAttachment } from './mediaAttachment.ts';

export const StatusEditEntity = Type.Object({
  content: Type.String(),
  spoiler_text: Type.String(),
  sensitive: Type.Boolean(),
  created_at: Type.String(),
  account: AccountEntity,
  poll: Type.Optional(Type.Object({ options: Type.Array(Type.Object({ title: Type.String() })) })),
  media_attachments: Type.Array(MediaAttachmentEntity),
  emojis: Type.Array(CustomEmojiEntity),
});
export type StatusEdit = Static<typeof StatusEditEntity>;

export async function presentStatusEdits(
  core: Core,
  edits: StatusEditDoc[],
  author: AccountDoc,
): Promise<StatusEdit[]> {
  const account = await presentAccount(core, author);
  const media = await loadAttachments(core, [...new Set(edits.flatMap((e) => e.mediaIds))]);
  const byId = new Map(media.map((m) => [m._id, presentMediaAttachment(core, m)]));
  const emojis = await Promise.all(edits.map((e) => emojisInTexts(core, [e.spoilerText, e.content], author.domain)));
  return edits.map((e, i) => {
    const out: StatusEdit = {
      content: e.content,
      spoiler_text: e.spoilerText,
      sensitive: e.sensitive,
      created_at: e.createdAt.toISOString(),
      account,
      media_attachments: e.mediaIds.map((id) => byId.get(id)).filter((m) => m !== undefined),
      emojis: emojis[i],
    };
    if (e.pollOptions) out.poll = { options: e.pollOptions.map((title) => ({ title })) };
    return out;
  });
}
