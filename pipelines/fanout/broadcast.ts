// What the fan-out tells the streaming servers (Mastodon's FanOutOnWriteService broadcasts): an
// `update` with the rendered status on the streams of the feeds it went to, and for public
// statuses (not replies to others, not reblogs) on the public and hashtag streams; a `delete` with
// the id on the same streams when it goes away; `status.update` on the same streams after an edit.
import type { Core } from '../../services/core/context.ts';
import type { Id } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { publishToStreams, timelineChannels, type StreamMessage } from '../../services/core/streaming/channels.ts';
import { presentStatusPage } from '../../services/core/entities/statusRender.ts';
import { traceStage } from '../../services/core/streaming/latencyTrace.ts';

interface Reach {
  home: Id[];
  lists: Id[];
}

function publicChannels(
  status: Pick<StatusDoc, 'visibility' | 'local' | 'reblogOfId' | 'inReplyToAccountId' | 'accountId' | 'tagNames'>,
  hasMedia: boolean,
): string[] {
  if (status.visibility !== 'public' || status.reblogOfId !== null) return [];
  if (status.inReplyToAccountId !== null && status.inReplyToAccountId !== status.accountId) return [];
  const scope = status.local ? 'local' : 'remote';
  const out = [timelineChannels.public('all'), timelineChannels.public(scope)];
  if (hasMedia) out.push(timelineChannels.public('all', true), timelineChannels.public(scope, true));
  for (const tag of status.tagNames) {
    out.push(timelineChannels.hashtag(tag));
    if (status.local) out.push(timelineChannels.hashtag(tag, true));
  }
  return out;
}

async function publishAll(core: Core, channels: string[], message: StreamMessage): Promise<void> {
  await publishToStreams(core.redis, core.config, channels, message);
}

/** What an `update` carries: the status and its rendering without a viewer (null: gone). */
export interface RenderedUpdate {
  doc: StatusDoc;
  payload: string;
}

/**
 * Renders a status for the streams, once, without a viewer (which also warms the cache the
 * timelines read). Independent of the fan-out, so it runs while the feeds are written.
 */
export async function renderUpdate(
  core: Core,
  statusId: Id,
  /** The status as its consumer batch read it (null: it did not exist then); read here if absent. */
  ahead?: StatusDoc | null,
): Promise<RenderedUpdate | null> {
  const doc = ahead !== undefined ? ahead : await collection(core.db, statuses).findOne({ _id: statusId });
  if (!doc || doc.deletedAt) return null;
  // The document just read stands for the live fields (no second read of the status).
  const [rendered] = await presentStatusPage(core, [statusId], null, { check: 'feed', docs: [doc] });
  traceStage(statusId, 'fanout.rendered');
  return rendered ? { doc, payload: JSON.stringify(rendered) } : null;
}

/** How long a status's public `update` is remembered: far longer than any redelivery. */
const PUBLIC_UPDATE_MARK_SECONDS = 6 * 3600;

/**
 * Whether this is the first `update` of the status on the public streams. A fan-out handled again
 * (its offsets were not committed before a crash) must not announce it twice: the feeds' writes
 * tell which followers are new (insertIntoFeeds), this mark tells it for the public streams.
 */
async function firstPublicUpdate(core: Core, statusId: Id): Promise<boolean> {
  return (await core.redis.set(`announced:${statusId}`, '1', 'EX', PUBLIC_UPDATE_MARK_SECONDS, 'NX')) === 'OK';
}

/**
 * `update` for a new status (or `status.update` for an edit) on the streams of the feeds it
 * reached, and (unless `publicStreams` is false) the public and hashtag streams it belongs on.
 */
export async function broadcastUpdate(
  core: Core,
  statusId: Id,
  reach: Reach,
  event: 'update' | 'status.update' = 'update',
  rendering: Promise<RenderedUpdate | null> = renderUpdate(core, statusId),
  publicStreams = true,
): Promise<void> {
  if (!publicStreams && reach.home.length === 0 && reach.lists.length === 0) return;
  const rendered = await rendering;
  if (!rendered) return;
  const { doc, payload } = rendered;
  let everyone = publicStreams ? publicChannels(doc, doc.mediaIds.length > 0) : [];
  if (everyone.length > 0 && event === 'update' && !(await firstPublicUpdate(core, statusId))) everyone = [];
  await publishAll(
    core,
    [
      ...reach.home.map((id) => timelineChannels.user(id)),
      ...reach.lists.map((id) => timelineChannels.list(id)),
      ...everyone,
    ],
    { event, payload },
  );
  traceStage(statusId, 'fanout.published');
}

export async function broadcastDelete(
  core: Core,
  status: Pick<StatusDoc, 'visibility' | 'local' | 'reblogOfId' | 'inReplyToAccountId' | 'accountId' | 'tagNames'> & {
    _id: Id;
  },
  reach: Reach,
): Promise<void> {
  await publishAll(
    core,
    [
      ...reach.home.map((id) => timelineChannels.user(id)),
      ...reach.lists.map((id) => timelineChannels.list(id)),
      ...publicChannels(status, true),
    ],
    { event: 'delete', payload: String(status._id) },
  );
}
