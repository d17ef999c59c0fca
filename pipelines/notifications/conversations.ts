// Adding a direct status to a participant's conversation and telling their streams: a
// `conversation` event (the Conversation entity) on timeline:direct:<id> (the `direct` stream)
// and timeline:<id>. Only that: Mastodon sends no `update` on the direct stream.
import type { Core } from '../../services/core/context.ts';
import type { Id } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { addStatusToConversation, type DirectStatus } from '../../services/core/conversations/accountConversations.ts';
import { publishToStream, timelineChannels } from '../../services/core/streaming/channels.ts';
import { presentConversations } from '../../services/core/entities/conversation.ts';

export async function addToConversation(core: Core, recipient: Id, s: DirectStatus): Promise<void> {
  const viewer = await collection(core.db, accounts).findOne({ _id: recipient });
  if (!viewer || viewer.domain !== null) return;
  const conversation = await addStatusToConversation(core, recipient, s);
  const [rendered] = await presentConversations(core, [conversation], viewer);
  if (!rendered || rendered.last_status === null) return;
  const event = { event: 'conversation' as const, payload: JSON.stringify(rendered) };
  await Promise.all([
    publishToStream(core.redis, core.config, timelineChannels.direct(recipient), event),
    publishToStream(core.redis, core.config, timelineChannels.user(recipient), event),
  ]);
}
